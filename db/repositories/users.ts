import type { Queryable } from '../pool';

export interface UserRow {
  id: string;
  email: string;
  name: string;
  password_hash: string;
  created_at: Date;
}

export function createUsersRepository(db: Queryable) {
  return {
    /** Returns null when the email is taken (case-insensitively). */
    async insert(input: { email: string; name: string; passwordHash: string }, q: Queryable = db): Promise<UserRow | null> {
      const { rows } = await q.query<UserRow>(
        `INSERT INTO users (email, name, password_hash) VALUES ($1, $2, $3)
         ON CONFLICT (lower(email)) DO NOTHING
         RETURNING id, email, name, password_hash, created_at`,
        [input.email, input.name, input.passwordHash],
      );
      return rows[0] ?? null;
    },

    async findByEmail(email: string, q: Queryable = db): Promise<UserRow | null> {
      const { rows } = await q.query<UserRow>(
        `SELECT id, email, name, password_hash, created_at FROM users WHERE lower(email) = lower($1)`,
        [email],
      );
      return rows[0] ?? null;
    },

    async findById(id: string, q: Queryable = db): Promise<UserRow | null> {
      const { rows } = await q.query<UserRow>(
        `SELECT id, email, name, password_hash, created_at FROM users WHERE id = $1`,
        [id],
      );
      return rows[0] ?? null;
    },
  };
}
export type UsersRepository = ReturnType<typeof createUsersRepository>;
