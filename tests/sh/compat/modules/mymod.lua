-- SPDX-License-Identifier: MIT
return {name = "mymod", args = {...}}
