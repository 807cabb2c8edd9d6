-- wrk script: each request pushes a batch of 100 new records to dataset "bench" with a fresh
-- Idempotency-Key; HLC stamps from the wall clock, node = the wrk thread.
local next_tid = 1
function setup(thread)
  thread:set("tid", next_tid)
  next_tid = next_tid + 1
end

local counter = 0
local token = os.getenv("TANDEM_TOKEN")
local batch = tonumber(os.getenv("TANDEM_BATCH") or "100")

function init(args)
  tid = tonumber(tid) or 0
end

function request()
  counter = counter + 1
  local stamp = string.format("%012x-%04x-%016x", os.time() * 1000, counter % 65536, tid)
  local changes = {}
  for i = 1, batch do
    local id = string.format("00000000-0000-%04x-0000-%012x", tid, counter * 1000 + i)
    changes[i] = string.format(
      '{"record":"tandem://bench/Todo/%s","entity":"Todo","kind":"insert","values":{"title":"item %d","rank":%d},"stamps":{"title":"%s","rank":"%s"}}',
      id, i, i, stamp, stamp)
  end
  local body = '{"schemaVersion":1,"changes":[' .. table.concat(changes, ",") .. ']}'
  local headers = {}
  headers["Authorization"] = "Bearer " .. token
  headers["Content-Type"] = "application/json"
  headers["Idempotency-Key"] = string.format("k-%d-%d", tid, counter)
  return wrk.format("POST", "/v1/datasets/bench/push", headers, body)
end
