-- SPDX-License-Identifier: MIT
error(true)
