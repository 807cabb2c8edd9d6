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
-- Mean think time between a client's requests (ms); 0: back to back (saturation).
local pace = tonumber(os.getenv("TANDEM_PACE_MS") or "0")
-- Distinguishes the runs of one bench: keys and record ids stay unique across them.
local run = tonumber(os.getenv("TANDEM_RUN") or "0")

-- Exponentially distributed think times: clients that sync at random moments, bursts included.
function delay()
  if pace <= 0 then return 0 end
  return math.floor(-pace * math.log(1 - math.random()))
end

function init(args)
  tid = tonumber(tid) or 0
  math.randomseed(tid * 7919 + os.time())
end

function request()
  counter = counter + 1
  local stamp = string.format("%012x-%04x-%016x", os.time() * 1000, counter % 65536, tid)
  local changes = {}
  for i = 1, batch do
    local id = string.format("00000000-%04x-%04x-0000-%012x", run, tid, counter * 1000 + i)
    changes[i] = string.format(
      '{"record":"tandem://bench/Todo/%s","entity":"Todo","kind":"insert","values":{"title":"item %d","rank":%d},"stamps":{"title":"%s","rank":"%s"}}',
      id, i, i, stamp, stamp)
  end
  local body = '{"schemaVersion":1,"changes":[' .. table.concat(changes, ",") .. ']}'
  local headers = {}
  headers["Authorization"] = "Bearer " .. token
  headers["Content-Type"] = "application/json"
  headers["Idempotency-Key"] = string.format("k-%d-%d-%d", run, tid, counter)
  return wrk.format("POST", "/v1/datasets/bench/push", headers, body)
end
