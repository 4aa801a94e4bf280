-- SPDX-License-Identifier: MIT
error()
