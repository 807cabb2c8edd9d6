-- wrk script: pulls pages of 100 of dataset "bench", following nextCursor (each wrk thread
-- reads the log once, from the start); think time as in push.lua.
local token = os.getenv("TANDEM_TOKEN")
local pace = tonumber(os.getenv("TANDEM_PACE_MS") or "0")
local cursor = ""

function init(args)
  math.randomseed(os.time() + math.floor(math.random() * 1000))
end

function delay()
  if pace <= 0 then return 0 end
  return math.floor(-pace * math.log(1 - math.random()))
end

function request()
  local headers = {}
  headers["Authorization"] = "Bearer " .. token
  return wrk.format("GET", "/v1/datasets/bench/pull?limit=100&after=" .. cursor, headers)
end

function response(status, headers, body)
  if status == 200 then
    local next_cursor = body:match('"nextCursor":"([^"]*)"')
    if next_cursor then cursor = next_cursor end
  end
end
