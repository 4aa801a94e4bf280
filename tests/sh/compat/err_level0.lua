-- SPDX-License-Identifier: MIT
error("level zero", 0)
