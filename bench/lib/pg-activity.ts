// Waiting for PostgreSQL to finish the bench servers' statements. When a load run stops, the
// statements its requests started still run (and more wait in the servers' pools): the next run
// would start behind them. The bench's servers connect with an application_name of their own,
// so their work is told apart from anything else on the database.
import type pg from 'pg';

export const APPLICATION_PREFIX = 'bench_';

/** `url` with its connections named `bench_<name>` in pg_stat_activity. */
export function namedConnection(url: string, name: string): string {
  const named = new URL(url);
  named.searchParams.set('application_name', `${APPLICATION_PREFIX}${name}`);
  return named.toString();
}

/** Resolves once no connection of the bench's servers has had a statement running for ~300 ms; the seconds waited. */
export async function settled(db: pg.Client, limitSeconds = 300): Promise<number> {
  const started = performance.now();
  let quiet = 0;
  while (quiet < 3 && performance.now() - started < limitSeconds * 1000) {
    const { rows } = await db.query(`select count(*)::int as active from pg_stat_activity where application_name like $1 and state = 'active'`, [`${APPLICATION_PREFIX}%`]);
    quiet = rows[0].active === 0 ? quiet + 1 : 0;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return (performance.now() - started) / 1000;
}
