"""Many workers as one server: shared legacy sessions and a shared key, through Redis.

`deployment` (`Deployment`, what users configure), `shared` (one worker's part:
`RedisSessions`, the router's `transports._http.server.sharing.SharedSessions`),
`relay` (forwarding a request to its session's owner and relaying the answer),
`hub` (`FanoutHub`), `task_store` (`RedisTaskStore`: tasks any worker reads and
writes), `task_runner` (`SharedTaskRunner`: runs any worker cancels and awaits),
`messages` (what workers publish to each other). It sits above
the ASGI app, whose per-request machinery (writer, watcher) answers forwarded requests
too.
"""
