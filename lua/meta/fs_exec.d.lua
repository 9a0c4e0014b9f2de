---@meta steward

-- fs and exec (docs/lua-api.md "Files (fs)", "Commands (exec)").

-- ---------------------------------------------------------------------------------------
-- fs
-- ---------------------------------------------------------------------------------------

---A file in a volume: "volume_id:rel/path" ("app:data:reports/x.txt"; "app:data" or
---"app:data:" is the volume's root). The relative part is normalized first (a leading "/",
---"." and empty components dropped, ".." removing the one before it); a ".." that would climb
---out of the volume is refused. No link is followed anywhere in it.
---@alias steward.FsPath string

---Why an fs call failed: 'bad path "<path>": expected volume_id:path', 'bad path "<path>": it
---leaves the volume', "permission denied: fs.read|fs.write on <path>", "no such volume: <id>",
---"read-only volume: <id>", "too many open files (at most 256 per process)", or
---"<path>: <reason>": the system's text ("no such file or directory", "file already exists",
---"directory not empty", "not a directory", "illegal operation on a directory") or
---"symbolic links are not followed", "not a regular file", "the volume's root",
---"file too large (at most N bytes)", "too many entries (at most 100000)".
---File objects add "closed", "eof", "not open for reading", "not open for writing",
---"busy: another task is using the file".
---@alias steward.FsError string

---@alias steward.FsType "file"|"directory"|"symlink"|"other"

---@class steward.FsStat
---@field type steward.FsType
---@field size number bytes
---@field mode number permission bits (420 is 0644)
---@field mtime number seconds since the epoch (a float)

---@class steward.FsEntry
---@field name string
---@field type steward.FsType

---Permission bits: a number (tonumber("644", 8)) or an octal string ("0644").
---@alias steward.FsMode number|string

---An open file (fs.open). One call at a time; getmetatable(f) is "fs.file"; it cannot be
---sent; collected, it closes. Closed when its process ends, however it ends.
---@class steward.File
local File = {}

---1 to n bytes (what read_line read ahead first), or nil, "eof" at the end.
---@param n integer
---@return string|nil data
---@return steward.FsError? err
function File:read(n) end

---The next line without its "\n" or "\r\n" (the last one even without it); nil, "eof" at the
---end; nil, "<path>: line too long (at most 65536 bytes)" past 64 KB.
---@return string|nil line
---@return steward.FsError? err
function File:read_line() end

---Writes s where the caller has read to (or at the end, opened with "a").
---@param s string
---@return true|nil ok
---@return steward.FsError? err
function File:write(s) end

---The new position from the start; f:seek() tells the position.
---@param whence? "set"|"cur"|"end" default "cur"
---@param offset? number default 0
---@return number|nil pos
---@return steward.FsError? err
function File:seek(whence, offset) end

---Closes it (idempotent; the fd closes on the thread pool).
---@return true|nil ok
---@return steward.FsError? err "busy: ..." while another task uses it
function File:close() end

---A volume (fs.volume): the fs calls on paths relative to it. getmetatable(v) is "fs.volume".
---@class steward.Volume
local Volume = {}
---@param rel string
---@return string|nil data
---@return steward.FsError? err
function Volume:read(rel) end
---@param rel string
---@param data string
---@param opts? {append?: boolean, mode?: steward.FsMode}
---@return true|nil ok
---@return steward.FsError? err
function Volume:write(rel, data, opts) end
---@param rel string
---@param mode? "r"|"w"|"a"|"r+"|"w+"|"a+"
---@return steward.File|nil file
---@return steward.FsError? err
function Volume:open(rel, mode) end
---@param rel string
---@return steward.FsEntry[]|nil entries
---@return steward.FsError? err
function Volume:list(rel) end
---@param rel string
---@return steward.FsStat|nil stat
---@return steward.FsError? err
function Volume:stat(rel) end
---@param rel string
---@param opts? {parents?: boolean, mode?: steward.FsMode}
---@return true|nil ok
---@return steward.FsError? err
function Volume:mkdir(rel, opts) end
---@param rel string
---@return true|nil ok
---@return steward.FsError? err
function Volume:remove(rel) end
---@param from string
---@param to string
---@return true|nil ok
---@return steward.FsError? err
function Volume:rename(from, to) end

---Files in the volumes the registry declares (fs.volume). Each call that touches the disk is
---one job on libuv's thread pool and blocks only its task ("cannot block here: ..." where no
---task can wait). Guarded: reading calls check fs.read, changing ones fs.write, on the
---normalized "volume_id:rel/path", before the volume is looked up.
---@class steward.fslib
fs = {}

---The whole file (at most 64 MB: host config limits.fs_read).
---@param path steward.FsPath
---@return string|nil data
---@return steward.FsError? err
function fs.read(path) end

---Creates (mode, default 0644, less the umask) or truncates the file, or appends to it.
---@param path steward.FsPath
---@param data string
---@param opts? {append?: boolean, mode?: steward.FsMode}
---@return true|nil ok
---@return steward.FsError? err
function fs.write(path, data, opts) end

---Opens a regular file; mode as in C ("r" default; a "b" is ignored).
---@param path steward.FsPath
---@param mode? "r"|"w"|"a"|"r+"|"w+"|"a+"
---@return steward.File|nil file
---@return steward.FsError? err
function fs.open(path, mode) end

---The entries of a directory, sorted by name (at most 100,000).
---@param dir steward.FsPath
---@return steward.FsEntry[]|nil entries
---@return steward.FsError? err
function fs.list(dir) end

---What path is (a link is described, not followed).
---@param path steward.FsPath
---@return steward.FsStat|nil stat
---@return steward.FsError? err
function fs.stat(path) end

---Makes a directory (mode default 0755); parents: the missing ones on the way too, and an
---existing one is no error.
---@param path steward.FsPath
---@param opts? {parents?: boolean, mode?: steward.FsMode}
---@return true|nil ok
---@return steward.FsError? err
function fs.mkdir(path, opts) end

---Removes a file, a link (not its target) or an empty directory.
---@param path steward.FsPath
---@return true|nil ok
---@return steward.FsError? err
function fs.remove(path) end

---Renames within or across volumes (one file system).
---@param from steward.FsPath
---@param to steward.FsPath
---@return true|nil ok
---@return steward.FsError? err
function fs.rename(from, to) end

---A handle on a volume, or nil, "no such volume: <id>" (not guarded: its calls are).
---@param id string "app:data"
---@return steward.Volume|nil volume
---@return string? err
function fs.volume(id) end

-- ---------------------------------------------------------------------------------------
-- exec
-- ---------------------------------------------------------------------------------------

---A command: cmd = {"program", "arg", ...} (1 to 4,096 strings; a bare program is looked up
---in the host's PATH, else it must be absolute); cwd: a directory in a volume ("app:data:x");
---env: the whole environment besides PATH; timeout: the group is killed once it passes;
---stdin (exec.run only): written, then closed (else /dev/null).
---@class steward.ExecCommand
---@field cmd string[]
---@field cwd? string
---@field env? table<string, string>
---@field timeout? steward.Duration
---@field stdin? string

---How a command ended: code (its exit status), or signal (the signal that killed it).
---@class steward.ExecStatus
---@field code? number
---@field signal? integer

---@class steward.ExecResult: steward.ExecStatus
---@field stdout string
---@field stderr string

---Why an exec call failed: "exec is disabled on this host (host config exec.allow)",
---"program not found: <name>", "permission denied: exec.run on <path>", "timeout",
---"output too large (at most N bytes of each stream)", "too many commands (at most 64 per
---process)", a cwd's path error, "cannot start <path>[ in <cwd>]: <reason>"; handles: "closed",
---"eof", "stdin closed", "exited", "busy: another task waits on this".
---@alias steward.ExecError string

---A running command (exec.spawn). getmetatable(h) is "exec.handle"; collected, or when its
---process ends, its process group is killed.
---@class steward.ExecHandle
local ExecHandle = {}

---Writes to its stdin (queued within 64 KB, else waits).
---@param s string
---@return true|nil ok
---@return steward.ExecError? err
function ExecHandle:write(s) end

---Closes its stdin once what is queued is written.
---@return true
function ExecHandle:close_stdin() end

---What has come on stdout (1 byte to 64 KB), waiting for some; nil, "eof" at the end.
---@return string|nil data
---@return steward.ExecError? err
function ExecHandle:read_stdout() end

---The same for stderr.
---@return string|nil data
---@return steward.ExecError? err
function ExecHandle:read_stderr() end

---Waits until it exited.
---@return steward.ExecStatus|nil status
---@return steward.ExecError? err "timeout" when its timeout killed it
function ExecHandle:wait() end

---Signals its process group.
---@param sig? string|integer "TERM" (default), "KILL", "INT", "HUP", "QUIT", "USR1", "USR2", "STOP", "CONT", or a number
---@return true|nil ok
---@return steward.ExecError? err "exited"
function ExecHandle:kill(sig) end

---Its process id (also its process group's).
---@return integer|nil pid
---@return steward.ExecError? err
function ExecHandle:pid() end

---Lets it go: a command still running is killed; waiting tasks get nil, "closed".
---@return true
function ExecHandle:close() end

---Commands, as argument vectors (never a shell), each in a process group of its own. Off
---unless the host config sets exec.allow: true. Guarded: action exec.run on the program's
---absolute path. A process holds at most 64; they are killed when it ends.
---@class steward.execlib
exec = {}

---Runs a command to its end, blocking only the calling task. Keeps at most 16 MB of each of
---stdout and stderr (host config limits.exec_output); what it leaves running in its group is
---killed when it exits.
---@param command steward.ExecCommand
---@return steward.ExecResult|nil result
---@return steward.ExecError? err
function exec.run(command) end

---Starts a command and returns a handle to talk to it.
---@param command steward.ExecCommand
---@return steward.ExecHandle|nil handle
---@return steward.ExecError? err
function exec.spawn(command) end
