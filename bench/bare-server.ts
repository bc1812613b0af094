import Fastify from 'fastify';
import pg from 'pg';

export const BARE_MEMORY_CONFIG = JSON.stringify({ type: 'conversation', maxMessages: 50, ttlMinutes: 1440 });

/**
 * The baseline: Fastify + pg doing the same database work as the API's agent read and create, with no
 * auth, no schemas (default JSON serialization), no hooks, no ledger entry.
 */
export function buildBareServer(pool: pg.Pool) {
  const app = Fastify({ logger: false });

  app.get<{ Params: { id: string } }>('/agents/:id', async (request, reply) => {
    const { rows } = await pool.query('SELECT * FROM agents WHERE id = $1', [request.params.id]);
    if (!rows[0]) return reply.code(404).send({ message: 'Not found' });
    return rows[0];
  });

  // No auth, so the account to charge comes in the body. Same statement order as the API (insert, then
  // the conditional charge), so both hold the hot account row's lock for the same span: every request
  // charges the one bench account, and that lock bounds write throughput.
  app.post<{ Body: { accountId: string; name: string } }>('/agents', async (request, reply) => {
    const { accountId, name } = request.body;
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const { rows } = await client.query(
        'INSERT INTO agents (account_id, name, memory_config) VALUES ($1, $2, $3) RETURNING *',
        [accountId, name, BARE_MEMORY_CONFIG],
      );
      const charged = await client.query(
        'UPDATE accounts SET balance = balance - 100 WHERE id = $1 AND balance >= 100 RETURNING balance',
        [accountId],
      );
      if (!charged.rowCount) {
        await client.query('ROLLBACK');
        return reply.code(402).send({ message: 'Insufficient balance' });
      }
      await client.query('COMMIT');
      return reply.code(201).send(rows[0]);
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  });

  return app;
}
