-- postgres-migrations disable-transaction
-- GET /api/runs (the account's runs across its agents, newest first) reads this index, as GET /api/agents reads
-- agents_page; without it the page scanned every run of the account. Built CONCURRENTLY, so writing runs goes on
-- while it is built on a large table (hence no transaction around this file).
CREATE INDEX CONCURRENTLY IF NOT EXISTS runs_account_page ON runs (account_id, created_at DESC, id DESC);
