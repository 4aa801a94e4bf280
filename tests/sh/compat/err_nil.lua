-- SPDX-License-Identifier: MIT
error(nil)
