---@meta steward

-- string, table, math, bit, coroutine, as the sandbox allows them (docs/sandbox-builtins.md).

-- ---------------------------------------------------------------------------------------
-- string (no dump; getmetatable("") is false; patterns have a work budget)
-- ---------------------------------------------------------------------------------------

---String functions, also available as methods on strings (("x"):upper()).
---find, match, gmatch and gsub use Lua 5.1 patterns with the same results as LuaJIT's, but
---raise "pattern too complex" past a work budget (1M steps + 64 per subject byte); a plain
---find is linear.
---@class stringlib
string = {}

---The byte codes of s[i..j] (defaults i = 1, j = i).
---@param s string|number
---@param i? integer
---@param j? integer
---@return integer ...
function string.byte(s, i, j) end

---A string of the given byte codes.
---@param ... integer
---@return string
function string.char(...) end

---Finds pattern in s from init (default 1); plain = true searches a plain substring.
---@param s string|number
---@param pattern string|number
---@param init? integer
---@param plain? boolean
---@return integer|nil start
---@return integer|nil end
---@return any ... captures
function string.find(s, pattern, init, plain) end

---Formats the arguments as printf does (%q quotes a string for Lua).
---@param fmt string|number
---@param ... any
---@return string
function string.format(fmt, ...) end

---An iterator over the matches of pattern in s (the captures, or the whole match).
---@param s string|number
---@param pattern string|number
---@return fun(): string?, ...
function string.gmatch(s, pattern) end

---Replaces matches of pattern (at most n) with repl: a string (%0-%9), a table or a function
---of the captures.
---@param s string|number
---@param pattern string|number
---@param repl string|number|table|function
---@param n? integer
---@return string
---@return integer count
function string.gsub(s, pattern, repl, n) end

---The length of s in bytes.
---@param s string|number
---@return integer
function string.len(s) end

---s in lowercase.
---@param s string|number
---@return string
function string.lower(s) end

---The captures of the first match of pattern in s from init, or nil.
---@param s string|number
---@param pattern string|number
---@param init? integer
---@return any ...
function string.match(s, pattern, init) end

---s repeated n times, with sep between copies.
---@param s string|number
---@param n integer
---@param sep? string|number
---@return string
function string.rep(s, n, sep) end

---s reversed.
---@param s string|number
---@return string
function string.reverse(s) end

---The substring s[i..j] (negative indexes count from the end).
---@param s string|number
---@param i integer
---@param j? integer
---@return string
function string.sub(s, i, j) end

---s in uppercase.
---@param s string|number
---@return string
function string.upper(s) end

-- ---------------------------------------------------------------------------------------
-- table
-- ---------------------------------------------------------------------------------------

---@class tablelib
table = {}

---list[i] .. sep .. ... .. list[j] (defaults "", 1, #list).
---@param list table
---@param sep? string|number
---@param i? integer
---@param j? integer
---@return string
function table.concat(list, sep, i, j) end

---Calls f(k, v) for every pair of t until f returns non-nil, and returns that (deprecated).
---@param t table
---@param f fun(k: any, v: any): any
---@return any
function table.foreach(t, f) end

---Calls f(i, v) for i = 1 .. #t until f returns non-nil, and returns that (deprecated).
---@param t table
---@param f fun(i: integer, v: any): any
---@return any
function table.foreachi(t, f) end

---#t (deprecated).
---@param t table
---@return integer
function table.getn(t) end

---Inserts value at pos (default: the end), shifting the rest up.
---@overload fun(list: table, value: any)
---@param list table
---@param pos integer
---@param value any
function table.insert(list, pos, value) end

---The largest positive numeric key of t (0 when none).
---@param t table
---@return number
function table.maxn(t) end

---Moves a1[f..e] to a2[t..] (a2 defaults to a1) and returns a2.
---@param a1 table
---@param f integer
---@param e integer
---@param t integer
---@param a2? table
---@return table a2
function table.move(a1, f, e, t, a2) end

---Removes list[pos] (default: the last) and returns it, shifting the rest down.
---@param list table
---@param pos? integer
---@return any
function table.remove(list, pos) end

---Sorts list in place with comp (default <). The comparator cannot block or yield.
---@generic T
---@param list T[]
---@param comp? fun(a: T, b: T): boolean
function table.sort(list, comp) end

-- ---------------------------------------------------------------------------------------
-- math
-- ---------------------------------------------------------------------------------------

---@class mathlib
---@field pi number
---@field huge number
math = {}

---@param x number
---@return number
function math.abs(x) end

---@param x number
---@return number
function math.acos(x) end

---@param x number
---@return number
function math.asin(x) end

---@param x number
---@return number
function math.atan(x) end

---@param y number
---@param x number
---@return number
function math.atan2(y, x) end

---@param x number
---@return integer
function math.ceil(x) end

---@param x number
---@return number
function math.cos(x) end

---@param x number
---@return number
function math.cosh(x) end

---Radians to degrees.
---@param x number
---@return number
function math.deg(x) end

---@param x number
---@return number
function math.exp(x) end

---@param x number
---@return integer
function math.floor(x) end

---The remainder of x / y, rounded towards zero.
---@param x number
---@param y number
---@return number
function math.fmod(x, y) end

---m and e such that x = m * 2^e.
---@param x number
---@return number m
---@return integer e
function math.frexp(x) end

---m * 2^e.
---@param m number
---@param e integer
---@return number
function math.ldexp(m, e) end

---The logarithm of x in base (default e).
---@param x number
---@param base? number
---@return number
function math.log(x, base) end

---@param x number
---@return number
function math.log10(x) end

---@param x number
---@param ... number
---@return number
function math.max(x, ...) end

---@param x number
---@param ... number
---@return number
function math.min(x, ...) end

---The integral and fractional parts of x.
---@param x number
---@return number
---@return number
function math.modf(x) end

---x ^ y.
---@param x number
---@param y number
---@return number
function math.pow(x, y) end

---Degrees to radians.
---@param x number
---@return number
function math.rad(x) end

---A pseudo-random number: in [0, 1) without arguments, in [1, m] with m, in [m, n] with both.
---@overload fun(): number
---@overload fun(m: integer): integer
---@param m integer
---@param n integer
---@return integer
function math.random(m, n) end

---Seeds math.random.
---@param x number
function math.randomseed(x) end

---@param x number
---@return number
function math.sin(x) end

---@param x number
---@return number
function math.sinh(x) end

---@param x number
---@return number
function math.sqrt(x) end

---@param x number
---@return number
function math.tan(x) end

---@param x number
---@return number
function math.tanh(x) end

-- ---------------------------------------------------------------------------------------
-- bit (LuaJIT's BitOp: 32-bit operations)
-- ---------------------------------------------------------------------------------------

---@class bitlib
bit = {}

---x normalized to a signed 32-bit number.
---@param x number
---@return integer
function bit.tobit(x) end

---x as n hex digits (default 8; negative n: uppercase).
---@param x number
---@param n? integer
---@return string
function bit.tohex(x, n) end

---@param x number
---@return integer
function bit.bnot(x) end

---@param x number
---@param ... number
---@return integer
function bit.band(x, ...) end

---@param x number
---@param ... number
---@return integer
function bit.bor(x, ...) end

---@param x number
---@param ... number
---@return integer
function bit.bxor(x, ...) end

---@param x number
---@param n integer
---@return integer
function bit.lshift(x, n) end

---@param x number
---@param n integer
---@return integer
function bit.rshift(x, n) end

---Arithmetic right shift.
---@param x number
---@param n integer
---@return integer
function bit.arshift(x, n) end

---@param x number
---@param n integer
---@return integer
function bit.rol(x, n) end

---@param x number
---@param n integer
---@return integer
function bit.ror(x, n) end

---Swaps the bytes of x.
---@param x number
---@return integer
function bit.bswap(x) end

-- ---------------------------------------------------------------------------------------
-- coroutine (plus spawn)
-- ---------------------------------------------------------------------------------------

---User coroutines, plus coroutine.spawn for tasks. Preemption and blocking host calls pass
---through user coroutines unnoticed (a blocked call inside one blocks its task).
---@class coroutinelib
coroutine = {}

---Starts fn(...) as a new task of this process, run concurrently with the others (blocking
---calls block only their own task). An uncaught error in any task fails the process; tasks
---still running when main returns end with the process.
---@param fn function
---@param ... any
---@return true
function coroutine.spawn(fn, ...) end

---A new coroutine running f.
---@param f function
---@return thread
function coroutine.create(f) end

---Whether the running coroutine can yield.
---@return boolean
function coroutine.isyieldable() end

---Starts or continues co. Resumes nest at most 200 deep (deeper: false, "C stack overflow").
---@param co thread
---@param ... any
---@return boolean success
---@return any ... values yielded or returned, or the error
function coroutine.resume(co, ...) end

---The running coroutine, or nil in a root coroutine (the main function or a task): process
---code never holds a coroutine the scheduler resumes.
---@return thread?
function coroutine.running() end

---"running", "suspended", "normal" or "dead".
---@param co thread
---@return "running"|"suspended"|"normal"|"dead"
function coroutine.status(co) end

---A function that resumes a new coroutine running f on each call and raises its errors.
---@param f function
---@return fun(...): ...
function coroutine.wrap(f) end

---Suspends the running coroutine, handing values to its resume.
---@param ... any
---@return any ... the values passed to the next resume
function coroutine.yield(...) end
