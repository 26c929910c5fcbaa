-- Sign-in attempts still being checked are held apart from failures, so
-- concurrent right passwords all get through while wrong ones still find
-- the limit taken (pending + failures never exceed it). `refused` marks
-- the first attempt refused in a window (the lockout event).
ALTER TABLE gatehouse_throttle ADD COLUMN pending INTEGER NOT NULL DEFAULT 0;
ALTER TABLE gatehouse_throttle ADD COLUMN refused INTEGER NOT NULL DEFAULT 0;

-- Answered forgot-password requests, kept until their work is done: the
-- account lookup, the token and the mail survive a crash after the 200.
CREATE TABLE gatehouse_reset_requests (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    email VARCHAR(255) NOT NULL,
    language VARCHAR(8) NOT NULL,
    requested_at BIGINT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    run_after BIGINT NOT NULL
);
