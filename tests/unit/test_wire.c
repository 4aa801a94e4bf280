/* SPDX-License-Identifier: MIT */
/*
** test_wire.c: round trips of every kind of value through the wire codec.
**
** Most checks are written in Lua on top of a few C helpers registered as
** globals (enc, dec, rt, xrt), so a failed Lua assert fails the test with the
** Lua message. Cross-state helpers decode in a second lua_State, which is
** what a receiving rank is: C functions must be found by name there and
** _ENV must become the receiver's globals.
*/
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "lauxlib.h"
#include "lualib.h"
#include "array/array.h"
#include "wire/wire.h"

/* ---------------------------------------------------------------- helpers */

static void *capalloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud, (void)osize;
  if (nsize == 0) {
    free(ptr);
    return NULL;
  }
  return nsize > ((size_t)256 << 20) ? NULL : realloc(ptr, nsize);
}

static int fake_send(lua_State *L) {
  lua_pushliteral(L, "fake send");
  return 1;
}

/* enc(...) -> message string | nil, err */
static int l_enc(lua_State *L) {
  int n = lua_gettop(L);
  char err[256];
  mpb_wbuf *b = mpb_wbuf_push(L);
  if (mpb_wire_encode(L, 1, n, b, -1, err, sizeof err)) {
    cr_assert_eq(lua_gettop(L), n + 1, "encode left the stack unbalanced");
    lua_pushnil(L);
    lua_pushstring(L, err);
    return 2;
  }
  cr_assert_eq(lua_gettop(L), n + 1, "encode left the stack unbalanced");
  char *flat = lua_newuserdatauv(L, b->len + b->extlen + 1, 0);
  mpb_wbuf_flatten(b, flat);
  lua_pushlstring(L, flat, b->len + b->extlen);
  return 1;
}

/* dec(s [, zerocopy]) -> true, values... | false, err (stack checked) */
static int l_dec(lua_State *L) {
  size_t len;
  const char *s = luaL_checklstring(L, 1, &len);
  int owner = 0;
  if (lua_toboolean(L, 2)) {
    char *copy = lua_newuserdatauv(L, len + 1, 0);  /* 8-byte aligned */
    memcpy(copy, s, len);
    s = copy;
    owner = lua_gettop(L);
  }
  lua_pushboolean(L, 1);
  int top = lua_gettop(L);
  char err[256];
  int n = mpb_wire_decode(L, s, len, owner, err, sizeof err);
  if (n < 0) {
    cr_assert_eq(lua_gettop(L), top, "failed decode left values on the stack");
    lua_pushboolean(L, 0);
    lua_pushstring(L, err);
    return 2;
  }
  cr_assert_eq(lua_gettop(L), top + n);
  return n + 1;
}

/* senc(...) -> the short way's message string (wire_scalar.c) | false when
** it does not take these values (the buffer then unchanged) */
static int l_senc(lua_State *L) {
  int n = lua_gettop(L);
  mpb_wbuf *b = mpb_wbuf_push(L);
  cr_assert_eq(mpb_wbuf_reserve(b, 3) != NULL, 1);
  memcpy(b->data, "hdr", 3); /* room before the body, as a message header */
  b->len = 3;
  int rc = mpb_wire_encode_scalars(L, 1, n, b);
  cr_assert_eq(lua_gettop(L), n + 1, "short encode left the stack unbalanced");
  cr_assert(rc >= 0, "short encode: out of memory");
  if (rc > 0) {
    cr_assert_eq(b->len, 3, "short encode refused but changed the buffer");
    lua_pushboolean(L, 0);
    return 1;
  }
  cr_assert_eq(memcmp(b->data, "hdr", 3), 0, "short encode wrote over the header");
  lua_pushlstring(L, b->data + 3, b->len - 3);
  return 1;
}

/* sdec(s) -> true, values... | false (nothing else pushed) */
static int l_sdec(lua_State *L) {
  size_t len;
  const char *s = luaL_checklstring(L, 1, &len);
  int top = lua_gettop(L);
  lua_pushboolean(L, 1);
  int n = mpb_wire_decode_scalars(L, s, len);
  if (n < 0) {
    cr_assert_eq(lua_gettop(L), top + 1, "short decode refused but pushed");
    lua_pushboolean(L, 0);
    return 1;
  }
  cr_assert_eq(lua_gettop(L), top + 1 + n);
  return n + 1;
}

static lua_State *newstate(void) {
  lua_State *L = lua_newstate(capalloc, NULL);
  cr_assert_not_null(L);
  luaL_openlibs(L);
  lua_newtable(L);
  mpb_open_array(L);
  lua_pushcfunction(L, fake_send);
  lua_setfield(L, -2, "send");
  lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  lua_pushvalue(L, -2);
  lua_setfield(L, -2, "mp");
  lua_pop(L, 1);
  lua_setglobal(L, "mp");
  lua_register(L, "enc", l_enc);
  lua_register(L, "dec", l_dec);
  lua_register(L, "senc", l_senc);
  lua_register(L, "sdec", l_sdec);
  return L;
}

static const char *prelude =
    "function rt(...)\n"
    "  local s = assert(enc(...))\n"
    "  local r = table.pack(dec(s, true))\n"
    "  assert(r[1], r[2])\n"
    "  local c = table.pack(dec(s, false))\n"  /* the copying path must agree */
    "  assert(c[1] and c.n == r.n)\n"
    "  return table.unpack(r, 2, r.n)\n"
    "end\n"
    "function bits(x) return string.pack('<d', x) end\n"
    "function same(a, b, seen)\n"
    "  seen = seen or {}\n"
    "  if type(a) ~= type(b) then return false end\n"
    "  if type(a) == 'number' then\n"
    "    if math.type(a) ~= math.type(b) then return false end\n"
    "    return math.type(a) == 'integer' and a == b or bits(a) == bits(b)\n"
    "  end\n"
    "  if type(a) == 'userdata' and a.dtype == nil then\n" /* mp.Complex */
    "    return b.dtype == nil and bits(a.re) == bits(b.re) and bits(a.im) == bits(b.im)\n"
    "  end\n"
    "  if type(a) == 'userdata' then\n"
    "    if a.dtype ~= b.dtype or #a ~= #b then return false end\n"
    "    local da, db = table.pack(a:dims()), table.pack(b:dims())\n"
    "    for i = 1, math.max(da.n, db.n) do if da[i] ~= db[i] then return false end end\n"
    "    for i = 1, #a do if not same(a[i], b[i]) then return false end end\n"
    "    return true\n"
    "  end\n"
    "  if type(a) ~= 'table' then return a == b end\n"
    "  if seen[a] then return seen[a] == b end\n"
    "  seen[a] = b\n"
    "  for k, v in pairs(a) do\n"
    "    local bk = k\n"
    "    if type(k) == 'table' then bk = seen[k] end\n"
    "    if bk == nil or not same(v, rawget(b, bk), seen) then return false end\n"
    "  end\n"
    "  for k in pairs(b) do if type(k) ~= 'table' and rawget(a, k) == nil then return false end end\n"
    "  return same(getmetatable(a), getmetatable(b), seen)\n"
    "end\n";

static void run(lua_State *L, const char *code) {
  if (luaL_dostring(L, prelude) || luaL_dostring(L, code))
    cr_assert_fail("%s", lua_tostring(L, -1));
}

static void check(const char *code) {
  lua_State *L = newstate();
  run(L, code);
  lua_close(L);
}

/* Encode what `sender` returns in one state, decode it in a fresh one (the
** receiving rank) and run `receiver` there with the values as `...`. */
static void xcheck(const char *sender, const char *receiver) {
  lua_State *S = newstate(), *R = newstate();
  int top = lua_gettop(S);
  if (luaL_dostring(S, prelude) || luaL_loadstring(S, sender) || lua_pcall(S, 0, LUA_MULTRET, 0))
    cr_assert_fail("sender: %s", lua_tostring(S, -1));
  int n = lua_gettop(S) - top;
  char err[256];
  mpb_wbuf *b = mpb_wbuf_push(S);
  cr_assert_eq(mpb_wire_encode(S, top + 1, n, b, -1, err, sizeof err), 0, "%s", err);
  char *flat = malloc(b->len + b->extlen + 1);
  mpb_wbuf_flatten(b, flat);
  if (luaL_dostring(R, prelude) || luaL_loadstring(R, receiver))
    cr_assert_fail("receiver: %s", lua_tostring(R, -1));
  int m = mpb_wire_decode(R, flat, b->len + b->extlen, 0, err, sizeof err);
  free(flat);
  cr_assert_eq(m, n, "decode: %s", err);
  if (lua_pcall(R, m, 0, 0)) cr_assert_fail("receiver: %s", lua_tostring(R, -1));
  lua_close(S);
  lua_close(R);
}

/* ---------------------------------------------------------------- scalars */

Test(wire, scalars) {
  check("local v = table.pack(rt(nil, true, false, 0, 127, 128, -1, -64, -65,\n"
        "  math.maxinteger, math.mininteger, 2^31, -2^31, 1.0, -0.0, 0.5))\n"
        "assert(v.n == 16 and v[1] == nil and v[2] == true and v[3] == false)\n"
        "local want = {nil, true, false, 0, 127, 128, -1, -64, -65, math.maxinteger,\n"
        "  math.mininteger, 2^31, -2^31, 1.0, -0.0, 0.5}\n"
        "for i = 4, 16 do assert(same(v[i], want[i]), i) end\n"
        "assert(math.type(v[14]) == 'float' and bits(v[15]) == bits(-0.0))\n"
        "for _, x in ipairs{1/0, -1/0, 0/0, -(0/0), 5e-324, math.huge, 1e308} do\n"
        "  assert(bits(rt(x)) == bits(x), x) end\n"
        "local nan = string.unpack('<d', '\\1\\2\\3\\4\\5\\6\\xf8\\x7f')\n"
        "assert(bits(rt(nan)) == bits(nan), 'NaN payload')\n"
        "for e = 0, 62 do for _, s in ipairs{1, -1} do\n"
        "  local x = s * (1 << e); assert(rt(x) == x and rt(x - 1) == x - 1) end end\n"
        "assert(select('#', rt()) == 0)\n");
}

Test(wire, strings) {
  check("local z = 'a\\0b\\0\\0c'\n"
        "assert(rt(z) == z and #rt(z) == 6)\n"
        "assert(rt('') == '')\n"
        "for n = 28, 36 do local s = string.rep('\\0\\255', n):sub(1, n); assert(rt(s) == s) end\n"
        "local t = {} for i = 0, 255 do t[#t + 1] = string.char(i) end\n"
        "local all = table.concat(t):rep(1000); assert(rt(all) == all)\n"
        "local big = string.rep('x', 1 << 20); assert(rt(big) == big)\n");
}

Test(wire, compact) {
  /* a small integer is 3 bytes: format, count, value */
  check("assert(#enc(5) == 3 and #enc(nil) == 3 and #enc('abc') == 6)\n"
        "assert(#enc(1.5) == 11 and #enc() == 2 and #enc(-1) == 4)\n");
}

/* The short way for scalars writes the general encoder's very bytes and
** reads them back alike, at every boundary of the format: integer widths,
** -0.0, NaN, 1 against 1.0, string lengths around the short-string tag,
** the varint length and the size sent in place; the value count's byte. */
Test(wire, short_way) {
  check("local function agree(...)\n"
        "  local n = select('#', ...)\n"
        "  local s = assert(enc(...))\n"
        "  local f = senc(...)\n"
        "  assert(f == s, 'short encode differs')\n"
        "  local a, b = table.pack(sdec(s)), table.pack(dec(s, false))\n"
        "  assert(a[1] == true and a.n == n + 1 and b.n == n + 1, 'short decode refused')\n"
        "  for i = 1, n do assert(same(a[i + 1], b[i + 1]) and same(a[i + 1], (select(i, ...))), i) end\n"
        "end\n"
        "local nan = string.unpack('<d', '\\1\\2\\3\\4\\5\\6\\xf8\\x7f')\n"
        "local vals = {true, false, 0, 1, 1.0, 127, 128, -1, -64, -65, 255, 256,\n"
        "  math.maxinteger, math.mininteger, math.maxinteger - 1, math.mininteger + 1,\n"
        "  -0.0, 0.0, 0/0, -(0/0), nan, 1/0, -1/0, 5e-324, 1e308, 0.5, 2^53, -2^63}\n"
        "for e = 0, 62 do vals[#vals + 1] = 1 << e; vals[#vals + 1] = -(1 << e) end\n"
        "for _, n in ipairs{0, 1, 31, 32, 33, 127, 128, 129, 8191, 8192, 16383, 16384, 65535} do\n"
        "  vals[#vals + 1] = string.rep('\\0\\255', n):sub(1, n) end\n"
        "for i = 1, #vals do agree(vals[i]) end\n"
        "agree(nil)\n"
        "agree()\n"
        "agree(nil, nil, 1.0, 1, '', -0.0)\n"
        "agree(table.unpack(vals, 1, 127))\n"
        "local s = table.pack(table.unpack(vals, 1, 128))\n"
        "assert(senc(table.unpack(s, 1, 128)) == false, '128 values: the general way')\n"
        "assert(senc(string.rep('x', 65536)) == false, 'a string sent in place: the general way')\n"
        "for _, v in ipairs{{}, print, function() end, mp.array and mp.array('f64', 2) or {}} do\n"
        "  assert(senc(1, v) == false and senc(v) == false, 'not a scalar') end\n"
        /* bodies it does not take: another kind, truncated, trailing bytes */
        "for _, b in ipairs{enc({}), enc(1, {}), enc(1.5):sub(1, -2), enc('abc'):sub(1, -2),\n"
        "  enc(1) .. '\\0', enc(-1):sub(1, -2), '', '\\1', '\\2\\0', enc(print)} do\n"
        "  assert(sdec(b) == false, 'short decode took a body it should refuse') end\n"
        "local bad = '\\1\\1\\3' .. string.rep('\\255', 9) .. '\\2'\n" /* a varint of 65 bits */
        "assert(sdec(bad) == false and dec(bad) == false, 'over-long varint')\n");
}

/* ---------------------------------------------------------------- tables */

Test(wire, tables) {
  check("local t = {1, 2, 3, nil, 5, x = 'y', [true] = false, [1.5] = {}, [-7] = 'neg',\n"
        "  nested = {a = {b = {c = 'd'}}}, [10^15] = 'big', [math.mininteger] = 1}\n"
        "assert(same(t, rt(t)))\n"
        "local e = rt({}); assert(next(e) == nil)\n"
        "local sparse = {}; sparse[1000] = 1; sparse[1] = 2\n"
        "assert(same(sparse, rt(sparse)))\n");
}

Test(wire, shared_and_cyclic) {
  check("local s = {v = 1}\n"
        "local t = {a = s, b = s, list = {s, s}}\n"
        "local u = rt(t)\n"
        "assert(u.a == u.b and u.list[1] == u.a and u.list[2] == u.a and u.a.v == 1)\n"
        "local c = {}; c.self = c; c[c] = c\n"
        "local d = rt(c); assert(d.self == d and d[d] == d)\n"
        "local x, y = {}, {}; x.y = y; y.x = x\n"
        "local x2, y2 = rt(x, y); assert(x2.y == y2 and y2.x == x2)\n"
        "local a1, a2 = rt(s, s); assert(a1 == a2)\n");
}

Test(wire, metatables) {
  check("local Class = {}; Class.__index = Class\n"
        "function Class.hello(self) return 'hi ' .. self.name end\n"
        "local o1 = setmetatable({name = 'a'}, Class)\n"
        "local o2 = setmetatable({name = 'b'}, Class)\n"
        "local p1, p2 = rt(o1, o2)\n"
        "assert(getmetatable(p1) == getmetatable(p2) and p1:hello() == 'hi a')\n"
        "local self = {}; setmetatable(self, self); local q = rt(self)\n"
        "assert(getmetatable(q) == q)\n");
}

/* Random nested tables from fixed seeds (printed on failure). */
Test(wire, random_tables) {
  check("local function rnd_string()\n"
        "  local t = {} for i = 1, math.random(0, 40) do t[i] = string.char(math.random(0, 255)) end\n"
        "  return table.concat(t) end\n"
        "local pool\n"
        "local function value(depth)\n"
        "  local k = math.random(depth > 4 and 7 or 10)\n"
        "  if k == 1 then return math.random(-200, 200)\n"
        "  elseif k == 2 then return math.random(math.mininteger, math.maxinteger)\n"
        "  elseif k == 3 then return (math.random() - 0.5) * 10 ^ math.random(-300, 300)\n"
        "  elseif k == 4 then return rnd_string()\n"
        "  elseif k == 5 then return math.random(2) == 1\n"
        "  elseif k == 6 then return ({1/0, -1/0, 0/0, -0.0, 0.0})[math.random(5)]\n"
        "  elseif k == 7 then local a = mp.array(({'f64','f32','i64','i32','u8'})[math.random(5)], math.random(0, 5), math.random(1, 3))\n"
        "    for i = 1, #a do a[i] = math.random(0, 100) end return a\n"
        "  elseif k == 8 and #pool > 0 then return pool[math.random(#pool)]\n"
        "  else\n"
        "    local t = {}\n"
        "    pool[#pool + 1] = t\n"
        "    for i = 1, math.random(0, 6) do t[i] = value(depth + 1) end\n"
        "    for i = 1, math.random(0, 6) do\n"
        "      local key = value(depth + 1)\n"
        "      -- object keys are checked in shared_and_cyclic: same() maps only values\n"
        "      if type(key) == 'table' or type(key) == 'userdata' then key = #pool end\n"
        "      if key == key then t[key] = value(depth + 1) end\n"
        "    end\n"
        "    return t\n"
        "  end\n"
        "end\n"
        "for seed = 1, 300 do\n"
        "  math.randomseed(seed); pool = {}\n"
        "  local v = {value(0), value(0), value(0)}\n"
        "  local w = {rt(v[1], v[2], v[3])}\n"
        "  for i = 1, 3 do assert(same(v[i], w[i]), 'random tables: seed ' .. seed) end\n"
        "end\n"
        "print('random_tables: seeds 1..300 round-tripped')\n");
}

/* ---------------------------------------------------------------- functions */

Test(wire, functions_local) {
  check("local function fact(n) if n <= 1 then return 1 end return n * fact(n - 1) end\n"
        "local f = rt(fact); assert(f(10) == 3628800)\n"
        "local function mk() local c = 0\n"
        "  return function() c = c + 1 return c end, function() return c end end\n"
        "local inc, get = mk()\n"
        "local i2, g2 = rt(inc, get); i2(); i2()\n"
        "assert(g2() == 2 and get() == 0, 'shared upvalue')\n"
        "local t = rt({inc = inc, get = get}); t.inc(); assert(t.get() == 1)\n"
        "local data = {1, 2, 3}\n"
        "local sum = function() local s = 0 for _, v in ipairs(data) do s = s + v end return s end\n"
        "assert(rt(sum)() == 6)\n"
        "local s1, s2 = rt(sum, sum); assert(s1 == s2)\n"
        "assert(rt(math.sin) == math.sin and rt(print) == print)\n"
        "local uses = function(x) return string.format('%d', math.floor(x)) end\n"
        "assert(rt(uses)(2.5) == '2')\n");
}

Test(wire, functions_cross_state) {
  /* decoded in another state: C functions by name, _ENV is the receiver's */
  xcheck("marker = 'sender'\n"
         "local function fib(n) return n < 2 and n or fib(n - 1) + fib(n - 2) end\n"
         "local function mk() local c = 10\n"
         "  return function(d) c = c + d return c end, function() return c end end\n"
         "local add, get = mk()\n"
         "local g = function() return marker end\n"
         "local conf = {f = math.floor, p = print, s = mp.send, u = string.upper, g = _G}\n"
         "return fib, add, get, g, conf, function(x) return math.sqrt(x) end\n",
         "marker = 'receiver'\n"
         "local fib, add, get, g, conf, sq = ...\n"
         "assert(fib(15) == 610)\n"
         "add(5); assert(get() == 15, 'shared upvalue across states')\n"
         "assert(g() == 'receiver', '_ENV must be the receiver globals')\n"
         "assert(conf.f == math.floor and conf.p == print and conf.u == string.upper)\n"
         "assert(conf.s == mp.send and conf.s() == 'fake send')\n"
         "assert(conf.g == _G and sq(16) == 4.0)\n");
}

/* ---------------------------------------------------------------- arrays */

Test(wire, arrays) {
  check("for _, dt in ipairs{'f64', 'f32', 'i64', 'i32', 'u8'} do\n"
        "  for _, shape in ipairs{{0}, {1}, {7}, {3, 4}, {2, 3, 4}, {5000}, {100, 30}, {1,1,1,1,1,1,1,2}} do\n"
        "    local a = mp.array(dt, table.unpack(shape))\n"
        "    for i = 1, #a do a[i] = (i * 7) % 251 end\n"
        "    local b = rt(a)\n"
        "    assert(same(a, b), dt .. ' ' .. table.concat(shape, 'x'))\n"
        "    if #b > 0 then b[1] = 1 end\n"
        "  end\n"
        "end\n"
        "local x = mp.array('i64', {math.mininteger, math.maxinteger, -1})\n"
        "local y = rt(x); assert(y[1] == math.mininteger and y[2] == math.maxinteger)\n"
        "local f = mp.array('f64', {0/0, -0.0, 1/0}); local g = rt(f)\n"
        "assert(bits(g[1]) == bits(f[1]) and bits(g[2]) == bits(-0.0) and g[3] == 1/0)\n"
        "local a1, a2 = rt(x, x); assert(a1 == a2)\n"
        "local t = rt({x, {x}, mp.array('u8', 4096), mp.array('u8', 4095), 'end'})\n"
        "assert(t[1] == t[2][1] and #t[3] == 4096 and #t[4] == 4095 and t[5] == 'end')\n"
        "local s = mp.array('f64', 10, 10):slice(3, 4); s[1] = 9\n"
        "assert(same(rt(s), s) and rt(s):dims() == 10)\n");
}

/* Complex values and c64/c128 arrays: every bit of both parts, in place
** when large, and complex values anywhere a value goes. */
Test(wire, complex) {
  check("local C = mp.complex\n"
        "local z = C(0/0, -0.0)\n"
        "local w = rt(z); assert(same(z, w) and getmetatable(w) == getmetatable(z))\n"
        "local v = table.pack(rt(C(1, 2), {k = C(-1/0, 2^-1074), [3] = C(0, 0)}, C(1e308, -1e-308)))\n"
        "assert(v[1] == C(1, 2) and v[2].k == C(-1/0, 2^-1074) and v[2][3] == C(0, 0))\n"
        "assert(v[3] == C(1e308, -1e-308))\n"
        "for _, dt in ipairs{'c64', 'c128'} do\n"
        "  for _, n in ipairs{0, 1, 255, 256, 257, 4096} do\n"
        "    local a = mp.array(dt, n, 2)\n"
        "    for i = 1, #a do a[i] = C(i * 0.5, -i) end\n"
        "    if #a > 0 then a[#a] = C(0/0, 1/0) end\n"
        "    local b = rt(a)\n"
        "    assert(b.dtype == dt and same(a, b), dt .. ' ' .. n)\n"
        "  end\n"
        "end\n"
        "local a = mp.array('c128', 3):fill({1, 2})\n"
        "local t = rt({a, a, C(5, 6)}); assert(t[1] == t[2] and t[1][3] == C(1, 2) and t[3] == C(5, 6))\n");
  /* every truncation of a message holding a complex value and a c128 array is refused */
  lua_State *L = newstate();
  run(L, "return mp.complex(1, 2), mp.array('c128', 2):fill({3, 4})");
  char err[128];
  mpb_wbuf *b = mpb_wbuf_push(L);
  cr_assert_eq(mpb_wire_encode(L, -3, 2, b, -1, err, sizeof err), 0, "%s", err);
  size_t len = b->len + b->extlen;
  char *flat = malloc(len);
  mpb_wbuf_flatten(b, flat);
  for (size_t k = 0; k < len; k++) {
    int top = lua_gettop(L);
    cr_assert_lt(mpb_wire_decode(L, flat, k, 0, err, sizeof err), 0, "a prefix of %zu bytes decoded", k);
    cr_assert_eq(lua_gettop(L), top);
  }
  cr_assert_eq(mpb_wire_decode(L, flat, len, 0, err, sizeof err), 2, "%s", err);
  free(flat);
  lua_close(L);
}

static void enc_arrays(lua_State *L, const char *code, mpb_wbuf **bp, int *nseg) {
  luaL_dostring(L, code);
  int n = lua_gettop(L);
  char err[128];
  mpb_wbuf *b = mpb_wbuf_push(L);
  cr_assert_eq(mpb_wire_encode(L, 1, n, b, -1, err, sizeof err), 0, "%s", err);
  *bp = b;
  *nseg = b->nseg;
}

Test(wire, external_segments_and_views) {
  lua_State *L = newstate();
  mpb_wbuf *b;
  int nseg;
  enc_arrays(L, "local a = mp.array('f64', 1000) for i = 1, 1000 do a[i] = i end\n"
                "return 'x', a, mp.array('u8', 5), mp.array('i32', 2, 1024), a", &b, &nseg);
  cr_assert_eq(nseg, 2, "two arrays >= MPB_WIRE_EXTMIN bytes, one repeated");
  cr_assert_eq(b->extlen, 8000 + 8192);
  cr_assert_lt(b->len, 200, "external data is not copied inline");
  size_t len = b->len + b->extlen;
  char *flat = lua_newuserdatauv(L, len, 0);  /* 8-aligned, owns the bytes */
  int owner = lua_gettop(L);
  mpb_wbuf_flatten(b, flat);
  char err[128];
  int top = lua_gettop(L);
  cr_assert_eq(mpb_wire_decode(L, flat, len, owner, err, sizeof err), 5, "%s", err);
  mpb_array *a = mpb_array_check(L, top + 2);
  cr_assert((char *)a->data >= flat && (char *)a->data < flat + len, "zero-copy view");
  cr_assert_eq(((uintptr_t)a->data) % 8, 0);
  cr_assert_eq(mpb_array_getd(a, 999), 1000.0);
  cr_assert(lua_rawequal(L, top + 2, top + 5), "same array twice decodes to one");
  mpb_array *c = mpb_array_check(L, top + 4);
  cr_assert_eq(c->ndim, 2);
  cr_assert_eq(c->dims[1], 1024);
  lua_settop(L, top);
  cr_assert_eq(mpb_wire_decode(L, flat, len, 0, err, sizeof err), 5, "%s", err);
  a = mpb_array_check(L, top + 2);
  cr_assert((char *)a->data < flat || (char *)a->data >= flat + len, "owner 0 copies");
  /* a misaligned buffer cannot hold views: the decoder copies */
  lua_settop(L, top);
  char *odd = lua_newuserdatauv(L, len + 1, 0);
  memcpy(odd + 1, flat, len);
  cr_assert_eq(mpb_wire_decode(L, odd + 1, len, -1, err, sizeof err), 5, "%s", err);
  a = mpb_array_check(L, -4);
  cr_assert_eq(mpb_array_getd(a, 0), 1.0);
  /* steal flattens when there are segments */
  size_t slen;
  char *st = mpb_wbuf_steal(b, &slen);
  cr_assert_eq(slen, len);
  cr_assert_eq(memcmp(st, flat, len), 0);
  cr_assert_eq(b->len + b->extlen + (size_t)b->nseg, 0);
  free(st);
  lua_close(L);
}

Test(wire, append_and_reset) {
  /* a second message appended after a header: alignment is relative to the body */
  lua_State *L = newstate();
  char err[128];
  mpb_wbuf *b = mpb_wbuf_push(L);
  char *h = mpb_wbuf_reserve(b, 3);
  memcpy(h, "hdr", 3);
  b->len = 3;
  luaL_dostring(L, "return mp.array('f64', {1.5, 2.5})");
  cr_assert_eq(mpb_wire_encode(L, -1, 1, b, -2, err, sizeof err), 0, "%s", err);
  int top = lua_gettop(L);
  cr_assert_eq(mpb_wire_decode(L, b->data + 3, b->len - 3, 0, err, sizeof err), 1, "%s", err);
  cr_assert_eq(mpb_array_getd(mpb_array_check(L, -1), 1), 2.5);
  lua_settop(L, top);
  mpb_wbuf_reset(L, b, -2);
  cr_assert_eq(b->len, 0);
  cr_assert_eq(mpb_wire_encode(L, -1, 1, b, -2, err, sizeof err), 0, "%s", err);
  cr_assert_eq(mpb_wire_decode(L, b->data, b->len, 0, err, sizeof err), 1, "%s", err);
  lua_close(L);
}

/* ---------------------------------------------------------------- errors */

Test(wire, unsendable_paths) {
  check("local function e(...) local s, m = enc(...) assert(s == nil) return m end\n"
        "local m = e(1, {1, 2, {x = io.stdout}})\n"
        "assert(m == 'cannot send a userdata (at value #2 [3].x)', m)\n"
        "m = e(coroutine.create(print)); assert(m == 'cannot send a thread (at value #1)', m)\n"
        "local f = io.stdout; local g = function() return f end\n"
        "m = e({cb = g}); assert(m == 'cannot send a userdata (at value #1 .cb<upvalue f>)', m)\n"
        "m = e({[io.stdout] = 1}); assert(m == 'cannot send a userdata (at value #1 [<userdata>]<key>)', m)\n"
        "m = e(string.gmatch('a', 'a')); assert(m:find('C function without a name'), m)\n"
        "m = e({['a b'] = {[2.5] = {[true] = io.stderr}}})\n"
        "assert(m == 'cannot send a userdata (at value #1 [\"a b\"][2.5][true])', m)\n"
        "m = e(setmetatable({}, {__index = io.stdout}))\n"
        "assert(m == 'cannot send a userdata (at value #1 <metatable>.__index)', m)\n");
}

Test(wire, failed_encode_leaves_buffer) {
  lua_State *L = newstate();
  char err[128];
  mpb_wbuf *b = mpb_wbuf_push(L);
  int bidx = lua_gettop(L);
  luaL_dostring(L, "return 'ok'");
  cr_assert_eq(mpb_wire_encode(L, -1, 1, b, bidx, err, sizeof err), 0);
  size_t len = b->len;
  luaL_dostring(L, "return {mp.array('u8', 10000), io.stdout}");
  int top = lua_gettop(L);
  cr_assert_eq(mpb_wire_encode(L, -1, 1, b, bidx, err, sizeof err), -1);
  cr_assert_eq(lua_gettop(L), top);
  cr_assert_eq(b->len, len);
  cr_assert_eq(b->nseg, 0);
  cr_assert_eq(b->extlen, 0);
  lua_close(L);
}

Test(wire, unknown_cfunction_on_receiver) {
  lua_State *S = newstate(), *R = newstate();
  char err[128];
  lua_pushcfunction(S, fake_send);
  lua_setglobal(S, "only_here");
  lua_getglobal(S, "only_here");
  mpb_wbuf *b = mpb_wbuf_push(S);
  cr_assert_eq(mpb_wire_encode(S, -2, 1, b, -1, err, sizeof err), 0, "%s", err);
  int top = lua_gettop(R);
  cr_assert_eq(mpb_wire_decode(R, b->data, b->len, 0, err, sizeof err), -1);
  cr_assert_eq(lua_gettop(R), top);
  cr_assert_str_eq(err, "unknown C function 'only_here' at byte 2");
  lua_close(S);
  lua_close(R);
}

/* Encode what `sender` returns in one state; in a fresh one run `setup`,
** then decode (the receiving rank, its modules loaded) and run `receiver`
** with the values as `...`; or, with want_err, expect that error. */
static void xcheck_setup(const char *sender, const char *setup, const char *receiver,
                         const char *want_err) {
  lua_State *S = newstate(), *R = newstate();
  int top = lua_gettop(S);
  if (luaL_loadstring(S, sender) || lua_pcall(S, 0, LUA_MULTRET, 0))
    cr_assert_fail("sender: %s", lua_tostring(S, -1));
  int n = lua_gettop(S) - top;
  char err[256];
  mpb_wbuf *b = mpb_wbuf_push(S);
  cr_assert_eq(mpb_wire_encode(S, top + 1, n, b, -1, err, sizeof err), 0, "%s", err);
  if (luaL_dostring(R, setup)) cr_assert_fail("setup: %s", lua_tostring(R, -1));
  int rtop = lua_gettop(R);
  if (luaL_loadstring(R, receiver)) cr_assert_fail("receiver: %s", lua_tostring(R, -1));
  int m = mpb_wire_decode(R, b->data, b->len, 0, err, sizeof err);
  if (want_err) {
    cr_assert_eq(m, -1);
    cr_assert_eq(lua_gettop(R), rtop + 1, "the stack is left as it was");
    cr_assert(strstr(err, want_err) != NULL, "%s", err);
  } else {
    cr_assert_eq(m, n, "decode: %s", err);
    if (lua_pcall(R, m, 0, 0)) cr_assert_fail("receiver: %s", lua_tostring(R, -1));
  }
  lua_close(S);
  lua_close(R);
}

/* C modules (package.loaded's tables holding C functions) travel by name:
** the receiver gets its own, shared references stay one table, a module the
** receiver has not loaded is an error naming it; a Lua module is copied. */
Test(wire, modules_by_name) {
  const char *sender =
      "local mine = {f = function() return 'sender' end, clock = os.clock}\n"
      "package.loaded['my.mod'] = mine\n"
      "package.loaded['lua.mod'] = {g = function() return 'copied' end}\n"
      "local lm = package.loaded['lua.mod']\n"
      "return math, {m = math, again = math, s = string}, mine, function() return mine.f() end,\n"
      "       lm\n";
  xcheck_setup(sender, "package.loaded['my.mod'] = {f = function() return 'receiver' end}",
               "local m, t, mine, f, lm = ...\n"
               "assert(package.loaded['lua.mod'] == nil and lm.g() == 'copied')\n"
               "assert(rawequal(m, math) and rawequal(t.m, math) and rawequal(t.again, math))\n"
               "assert(rawequal(t.s, string))\n"
               "assert(rawequal(mine, package.loaded['my.mod']) and f() == 'receiver')\n",
               NULL);
  xcheck_setup(sender, "", "", "module 'my.mod' (sent by name) is not loaded here");
}

/* ienc(k, ...) -> a body built of items of k values each (the last may have
** fewer) | nil, err */
static int l_ienc(lua_State *L) {
  int k = (int)luaL_checkinteger(L, 1), n = lua_gettop(L) - 1;
  char err[256];
  mpb_wbuf *b = mpb_wbuf_push(L);
  int bidx = lua_gettop(L);
  mpb_wire_items it;
  cr_assert_eq(mpb_wire_items_open(b, &it), 0);
  for (int i = 0; i < n; i += k) {
    if (mpb_wire_items_add(L, 2 + i, k < n - i ? k : n - i, b, bidx, &it, err, sizeof err)) {
      lua_pushnil(L);
      lua_pushstring(L, err);
      return 2;
    }
    cr_assert_eq(lua_gettop(L), bidx, "an item left the stack unbalanced");
  }
  mpb_wire_items_close(b, &it);
  char *flat = lua_newuserdatauv(L, b->len + b->extlen + 1, 0);
  mpb_wbuf_flatten(b, flat);
  lua_pushlstring(L, flat, b->len + b->extlen);
  return 1;
}

/* A body of items: each item's objects are its own (a table two items hold
** arrives twice; references inside an item stay references), large arrays
** stay aligned, and what cannot travel is said from inside its value. */
Test(wire, items) {
  lua_State *L = newstate();
  lua_register(L, "ienc", l_ienc);
  run(L, "local T = {x = 1}; T.me = T\n"
         "local A = mp.array('f64', 1000):fill(3)\n"
         "local s = assert(ienc(2, 'a', T, 'b', {T, T}, 'c', A, 'd', A))\n"
         "for _, zero in ipairs({true, false}) do\n"
         "  local r = table.pack(dec(s, zero))\n"
         "  assert(r[1] and r.n == 9, r[2])\n"
         "  local t1, t2, a1, a2 = r[3], r[5], r[7], r[9]\n"
         "  assert(r[2] == 'a' and r[4] == 'b' and r[6] == 'c' and r[8] == 'd')\n"
         "  assert(t1.me == t1 and t1.x == 1 and t2[1] == t2[2] and t2[1] ~= t1)\n"
         "  assert(t2[1].me == t2[1] and a1 ~= a2 and a1:sum() == 3000 and a2:sum() == 3000)\n"
         "end\n"
         "local one = table.pack(dec(assert(enc('a', T, 'b', T))))\n"
         "assert(one[3] == one[5], 'one encoding shares what items do not')\n"
         "assert(select(2, dec(assert(ienc(1))) ) == nil)\n"
         "local s, err = ienc(2, 1, {2, {coroutine.create(print)}})\n"
         "assert(s == nil and err == 'cannot send a thread (at [2][1])', err)\n"
         "s, err = ienc(1, coroutine.create(print))\n"
         "assert(s == nil and err == 'cannot send a thread', err)\n");
  lua_close(L);
}
