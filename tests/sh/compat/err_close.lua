-- SPDX-License-Identifier: MIT
do
  local x <close> = setmetatable({}, {__close = function(_, e)
    print("closing with", e)
    error("close error")
  end})
  error("body error")
end
