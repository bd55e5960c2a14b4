-- sysbench 1.0 script for tests/real_clients.rs: an oltp-style write and a
-- row in a side table, in one transaction, and each thread's count of the
-- commits the server acknowledged. When the server goes away (a power loss
-- on command), each thread prints "acked THREAD N" on stderr; after the
-- restart, the side table must hold rows 1..N of every thread.

function thread_init()
   drv = sysbench.sql.driver()
   con = drv:connect()
   acked = 0
end

local function report()
   io.stderr:write(string.format("acked %d %d\n", sysbench.tid, acked))
   io.stderr:flush()
end

-- Deadlocks and lock wait timeouts are retried (the event runs again);
-- anything else ends the thread, after its count.
sysbench.hooks.sql_error_ignorable = function(err)
   if err.sql_errno == 1213 or err.sql_errno == 1205 then
      return true
   end
   report()
   return false
end

function event()
   con:query("BEGIN")
   con:query("UPDATE sbtest1 SET k = k + 1 WHERE id = " .. sysbench.rand.uniform(1, 1000))
   con:query(string.format("INSERT INTO side (thread, n) VALUES (%d, %d)",
                           sysbench.tid, acked + 1))
   con:query("COMMIT")
   acked = acked + 1
end

function thread_done()
   report()
   con:disconnect()
end
