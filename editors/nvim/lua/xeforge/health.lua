-- :checkhealth xeforge — the binary and its version, the harness (remote URL reachable, or
-- a local Python interpreter), and the torch/triton that interpreter sees.
local M = {}

local health = vim.health

--- The config the server would be started with (merged lsp/xeforge.lua + vim.lsp.config).
local function config()
  local ok, cfg = pcall(function()
    return vim.lsp.config.xeforge
  end)
  return ok and cfg or {}
end

local function run(cmd, opts, timeout_ms)
  local ok, obj = pcall(vim.system, cmd, vim.tbl_extend('force', { text = true }, opts or {}))
  if not ok then
    return nil, tostring(obj)
  end
  local res = obj:wait(timeout_ms or 10000)
  if res.signal ~= 0 and res.code == 0 then
    return nil, 'timed out'
  end
  return res
end

local function check_binary(cfg)
  health.start('xeforge: language server')
  local cmd = type(cfg.cmd) == 'table' and cfg.cmd or require('xeforge').server_cmd({})
  local found = require('xeforge').find_server(require('xeforge').options)
  local exe = vim.fn.exepath(cmd[1])
  if exe == '' then
    health.error(('server binary `%s` not found'):format(cmd[1]), {
      'Tried: ' .. table.concat(found.tried, ', '),
      'Install it into the project environment: `pip install xeforge` (a wheel built from a checkout: see the README)',
      "Or point to it: require('xeforge').setup({ server_path = '/path/to/xeforge' })",
    })
    return nil
  end
  local source = (found.path and vim.fn.exepath(found.path) == exe) and found.source or 'cmd'
  health.info(('found via: %s'):format(source))
  local res, err = run({ exe, '--version' })
  if not res or res.code ~= 0 then
    health.error(('`%s --version` failed: %s'):format(exe, err or vim.trim(res.stderr or '')))
    return exe, nil
  end
  local version = vim.trim(res.stdout):match('(%d+%.%d+%.%d+%S*)')
  health.ok(('binary: %s (%s)'):format(exe, vim.trim(res.stdout)))
  local clients = vim.lsp.get_clients({ name = 'xeforge' })
  if #clients > 0 then
    health.ok(('%d client(s) running, offset encoding %s'):format(#clients, clients[1].offset_encoding))
  else
    health.info('no xeforge client is running (open a Python file, or call vim.lsp.enable("xeforge"))')
  end
  return exe, version
end

local function settings_of(cfg)
  return (cfg.settings or {}).xeforge or cfg.init_options or {}
end

--- host, port from an http(s) URL; nil if it is not one.
local function host_port(url)
  local scheme, host, port = url:match('^(https?)://%[?([^%]/:]+)%]?:?(%d*)')
  if not scheme then
    return nil
  end
  return host, tonumber(port) or (scheme == 'https' and 443 or 80)
end

local function tcp_reachable(host, port, timeout_ms)
  local addrs = vim.uv.getaddrinfo(host, tostring(port), { socktype = 'stream' })
  if not addrs or not addrs[1] then
    return false, 'cannot resolve ' .. host
  end
  local tcp = assert(vim.uv.new_tcp())
  local result
  tcp:connect(addrs[1].addr, port, function(err)
    result = err or true
  end)
  vim.wait(timeout_ms, function()
    return result ~= nil
  end, 20)
  if not tcp:is_closing() then
    tcp:close()
  end
  if result == true then
    return true
  end
  return false, result or 'timed out'
end

--- The interpreter the server will use: the setting, the binary's own environment (a wheel install
--- puts `xeforge` beside the environment's python), the project's .venv, else python3.
local function local_python(s, exe)
  if s.harness and type(s.harness.python) == 'string' and s.harness.python ~= '' then
    return vim.fn.expand(s.harness.python), 'setting harness.python'
  end
  if vim.env.XEFORGE_PYTHON and vim.env.XEFORGE_PYTHON ~= '' then
    return vim.env.XEFORGE_PYTHON, 'XEFORGE_PYTHON'
  end
  if exe then
    local own = vim.fs.joinpath(vim.fs.dirname(exe), 'python')
    if
      vim.fn.executable(own) == 1
      and #vim.fn.glob(vim.fs.dirname(exe) .. '/../lib/python*/site-packages/xeforge_harness', false, true) > 0
    then
      return own, "the server's own environment"
    end
  end
  local venv = vim.fs.find('.venv', { upward = true, path = vim.fn.getcwd(), type = 'directory' })[1]
  if venv and vim.fn.executable(venv .. '/bin/python') == 1 then
    return venv .. '/bin/python', 'project .venv'
  end
  return vim.fn.exepath('python3'), 'python3 on PATH'
end

--- PYTHONPATH entry holding xeforge_harness: $XEFORGE_HARNESS_PATH, else the checkout the binary
--- was built in (<checkout>/target/<profile>/xeforge → <checkout>/server/harness).
local function harness_path(exe)
  local env = vim.env.XEFORGE_HARNESS_PATH
  if env and env ~= '' then
    return env
  end
  if exe then
    local real = vim.uv.fs_realpath(exe) or exe
    local candidate = vim.fs.normalize(vim.fs.dirname(real) .. '/../../server/harness')
    if vim.uv.fs_stat(candidate) then
      return vim.uv.fs_realpath(candidate)
    end
  end
end

local PROBE = [[
import importlib, sys
print("python", sys.version.split()[0])
for name in ("torch", "triton", "xeforge_harness"):
    try:
        m = importlib.import_module(name)
        print(name, getattr(m, "__version__", "present"))
    except Exception as e:
        print(name, "MISSING", type(e).__name__ + ": " + str(e).splitlines()[0] if str(e) else type(e).__name__)
]]

local function check_harness(exe, version, cfg)
  health.start('xeforge: verification harness')
  local s = settings_of(cfg)
  local url = s.harness and s.harness.url
  if type(url) == 'string' and url ~= '' then
    local host, port = host_port(url)
    if not host then
      health.error(('harness.url `%s` is not an http(s) URL'):format(url))
    else
      local ok, err = tcp_reachable(host, port, 3000)
      if ok then
        health.ok(('remote harness reachable at %s'):format(url))
      else
        health.error(('remote harness %s unreachable: %s'):format(url, err), {
          'Start it on the GPU machine: python -m xeforge_harness serve --http HOST:PORT',
        })
      end
    end
    return
  end
  local py, why = local_python(s, exe)
  if not py or py == '' then
    health.error(
      'no Python interpreter found for the harness',
      { 'Set harness.python, or create a .venv in the project' }
    )
    return
  end
  local env = {}
  local hp = harness_path(exe)
  if hp then
    env.PYTHONPATH = hp .. (vim.env.PYTHONPATH and (':' .. vim.env.PYTHONPATH) or '')
  end
  local res, err = run({ py, '-c', PROBE }, { env = env }, 60000)
  if not res or res.code ~= 0 then
    health.error(('%s (%s) did not run: %s'):format(py, why, err or vim.trim(res.stderr or '')))
    return
  end
  for line in vim.gsplit(vim.trim(res.stdout), '\n') do
    local name, rest = line:match('^(%S+) (.*)$')
    if name == 'python' then
      health.ok(('python %s: %s (%s)'):format(rest, py, why))
    elseif name and rest:match('^MISSING') then
      local advice = name == 'xeforge_harness'
          and { 'Set XEFORGE_HARNESS_PATH to <xeforge checkout>/server/harness, or use harness.url' }
        or { ('Install %s into %s, or point harness.python / harness.url elsewhere'):format(name, py) }
      health.warn(('%s not importable: %s'):format(name, rest:gsub('^MISSING%s*', '')), advice)
    elseif name == 'xeforge_harness' and version and rest ~= version then
      health.error(('xeforge_harness %s differs from the server %s: the server refuses it'):format(rest, version), {
        ('Install matching versions into %s (pip install xeforge==%s)'):format(py, version),
      })
    elseif name then
      health.ok(('%s %s'):format(name, rest))
    end
  end
end

local function check_inline()
  health.start('xeforge: inline suggestions')
  if (require('xeforge').options.inline or {}).enable == false then
    health.info('off (inline.enable = false)')
  elseif require('xeforge').has_inline() then
    health.ok('vim.lsp.inline_completion is available: fixes and verified stage results show as ghost text')
  else
    health.info(
      ('Neovim %s has no vim.lsp.inline_completion (0.12+): no ghost text; quick fixes and code lenses still work'):format(
        tostring(vim.version())
      )
    )
  end
end

function M.check()
  local cfg = config()
  local exe, version = check_binary(cfg)
  check_harness(exe, version, cfg)
  check_inline()
end

return M
