-- SPDX-License-Identifier: MIT
x = = 1
