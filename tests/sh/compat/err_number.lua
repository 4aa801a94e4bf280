-- SPDX-License-Identifier: MIT
error(42)
