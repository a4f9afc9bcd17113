"""The Lua scripts that make the job record's changes atomic in Redis.

State names are filled in from :class:`~.models.State`, so the scripts, the
store and the API share one vocabulary.
"""

from __future__ import annotations

from .models import FINAL_STATES, State


def _states(script: str) -> str:
    """``script`` with ``{DONE}``-style names replaced by the states' values
    (``{FINAL}`` by a Lua condition on ``ARGV[2]``)."""
    final = " or ".join(f"ARGV[2] == '{s}'" for s in sorted(FINAL_STATES))
    return script.replace("{FINAL}", final).format(**{s.name: s.value for s in State})


# Move KEYS[1] from one of the states in ARGV[1] (comma separated) to ARGV[2],
# setting the field/value pairs ARGV[4..].  Leaving for a final state drops the
# job ARGV[3] from the active set KEYS[2].  Returns 1 moved, 0 not allowed, -1 no job.
TRANSITION = _states("""
local s = redis.call('HGET', KEYS[1], 'state')
if not s then return -1 end
for a in string.gmatch(ARGV[1], '[^,]+') do
  if s == a then
    redis.call('HSET', KEYS[1], 'state', ARGV[2])
    for i = 4, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
    if {FINAL} then
      redis.call('SREM', KEYS[2], ARGV[3])
    end
    return 1
  end
end
return 0
""")

# Partition ARGV[1] writes "total:cases:entries" (or "whole") ARGV[2] and its
# slice ARGV[5] (if any) while the job enumerates, both at once.
# Returns the number of partitions present, or -1 if the job no longer takes partials.
WRITE_PARTIAL = _states("""
local s = redis.call('HGET', KEYS[1], 'state')
if s ~= '{QUEUED}' and s ~= '{ENUMERATING}' then return -1 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('EXPIRE', KEYS[2], ARGV[3])
if ARGV[5] ~= '' then
  redis.call('HSET', KEYS[3], ARGV[1], ARGV[5])
  redis.call('EXPIRE', KEYS[3], ARGV[3])
end
redis.call('HSET', KEYS[1], 'progress_at', ARGV[4], 'updated', ARGV[4])
return redis.call('HLEN', KEYS[2])
""")

# The reduce step's guard: enumerating -> drawing once (SET NX on KEYS[2]),
# storing the field/value pairs ARGV[3..].  Returns 1 for the one winner.
COMPLETE_ENUMERATION = _states("""
if redis.call('HGET', KEYS[1], 'state') ~= '{ENUMERATING}' then return 0 end
if not redis.call('SET', KEYS[2], ARGV[2], 'NX', 'EX', ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'state', '{DRAWING}')
for i = 3, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
return 1
""")

# Chunks ARGV[3], ARGV[5], ... with bytes ARGV[4], ARGV[6], ... (keys
# KEYS[3], KEYS[4], ...) are stored while the job draws, expiring in ARGV[1]
# seconds.  Returns the number of chunks done, or -1 if the job no longer takes chunks.
WRITE_CHUNKS = _states("""
if redis.call('HGET', KEYS[1], 'state') ~= '{DRAWING}' then return -1 end
for k = 3, #KEYS do
  redis.call('SET', KEYS[k], ARGV[2 * k - 2], 'EX', ARGV[1])
  redis.call('SADD', KEYS[2], ARGV[2 * k - 3])
end
redis.call('EXPIRE', KEYS[2], ARGV[1])
redis.call('HSET', KEYS[1], 'progress_at', ARGV[2], 'updated', ARGV[2])
return redis.call('SCARD', KEYS[2])
""")

# A routed job's partition ARGV[2] stores its piece ARGV[1] of chunk ARGV[5]
# (hash KEYS[2]) while the job draws and the chunk (in the set KEYS[3]) is not
# stored yet.  Returns the number of pieces of the chunk present, 0 when the
# chunk is stored already, or -1 if the job no longer takes chunks.
WRITE_PIECE = _states("""
if redis.call('HGET', KEYS[1], 'state') ~= '{DRAWING}' then return -1 end
if redis.call('SISMEMBER', KEYS[3], ARGV[5]) == 1 then return 0 end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[1])
redis.call('EXPIRE', KEYS[2], ARGV[3])
redis.call('HSET', KEYS[1], 'progress_at', ARGV[4], 'updated', ARGV[4])
return redis.call('HLEN', KEYS[2])
""")

# drawing -> done when all ARGV[1] chunks are present.  Returns 1 for the one winner.
FINISH = _states("""
if redis.call('HGET', KEYS[1], 'state') ~= '{DRAWING}' then return 0 end
if redis.call('SCARD', KEYS[2]) < tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'state', '{DONE}', 'finished', ARGV[2], 'updated', ARGV[2])
redis.call('SREM', KEYS[3], ARGV[3])
return 1
""")
