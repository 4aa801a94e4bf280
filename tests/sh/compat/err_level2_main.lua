-- SPDX-License-Identifier: MIT
error("from the main chunk at level 2", 2)
