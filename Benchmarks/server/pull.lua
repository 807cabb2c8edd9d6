-- wrk script: pulls pages of 100 from the start of dataset "bench".
function request()
  local headers = {}
  headers["Authorization"] = "Bearer " .. os.getenv("TANDEM_TOKEN")
  return wrk.format("GET", "/v1/datasets/bench/pull?limit=100", headers)
end
