import { mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Payload, StorageDriverClaim, StorageDriverStoreContext } from '@temporalio/common';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DirectoryDriver } from '../../src/payload-store/directory-driver.js';
import { PostgresDriver } from '../../src/payload-store/postgres-driver.js';
import type { BlobOwner } from '../../src/payload-store/blob.js';
import { startPostgres } from '../support/postgres.js';
import type { Postgres } from '../support/postgres.js';

const directories: string[] = [];
let postgres: Postgres;
let schemas = 0;
beforeAll(async () => {
  postgres = await startPostgres({ password: 'blob:s3cret' });
});
afterAll(async () => {
  await postgres?.close();
  await Promise.all(directories.map((directory) => rm(directory, { recursive: true, force: true })));
});

function payload(text: string): Payload {
  return { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from(JSON.stringify(text)) };
}

function context(workflowId: string): StorageDriverStoreContext {
  return { target: { kind: 'workflow', namespace: 'default', id: workflowId } };
}

const nobody = (): Promise<boolean> => Promise.resolve(false);

interface Driver {
  store(context: StorageDriverStoreContext, payloads: Payload[]): Promise<StorageDriverClaim[]>;
  retrieve(context: object, claims: StorageDriverClaim[]): Promise<Payload[]>;
  sweep(ownerKnown: (owner: BlobOwner) => Promise<boolean>, keepMs: number): Promise<number>;
  close(): Promise<void>;
}

/** The same behaviours for both drivers; `tamper` changes the stored bytes of a claim behind the driver's back. */
const drivers: Array<{
  name: string;
  make(): Promise<{ driver: Driver; tamper(claim: StorageDriverClaim): Promise<void>; age(): Promise<void> }>;
}> = [
  {
    name: 'a directory',
    async make() {
      const root = await mkdtemp(path.join(tmpdir(), 'keel-blobs-'));
      directories.push(root);
      const driver = new DirectoryDriver(root);
      await driver.open();
      const file = (claim: StorageDriverClaim) =>
        path.join(root, claim.claimData.scope!, `${claim.claimData.sha256}.payload`);
      return {
        driver,
        async tamper(claim) {
          const bytes = await readFile(file(claim));
          bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 1;
          await writeFile(file(claim), bytes);
        },
        async age() {
          const old = new Date(Date.now() - 48 * 3_600_000);
          for (const scope of await readdir(root)) {
            for (const name of await readdir(path.join(root, scope)))
              await utimes(path.join(root, scope, name), old, old);
          }
        },
      };
    },
  },
  {
    name: 'PostgreSQL',
    async make() {
      schemas += 1;
      const schema = `blobs_${schemas}`;
      const driver = new PostgresDriver(postgres.url(), schema);
      await driver.open();
      const sql = async (text: string, values: unknown[] = []) => {
        const client = new pg.Client({ connectionString: postgres.url() });
        await client.connect();
        try {
          await client.query(text, values);
        } finally {
          await client.end();
        }
      };
      return {
        driver,
        tamper: (claim) =>
          sql(`UPDATE "${schema}".payload_blobs SET data = data || '\\x00'::bytea WHERE sha256 = $1`, [
            claim.claimData.sha256,
          ]),
        age: () => sql(`UPDATE "${schema}".payload_blobs SET stored_at = now() - interval '48 hours'`),
      };
    },
  },
];

describe.each(drivers)('the payload store in $name', ({ name, make }) => {
  it('reports what a round trip of a 500 KB payload costs (a figure, not a check)', async () => {
    const { driver } = await make();
    try {
      const times: number[] = [];
      for (let index = 0; index < 20; index++) {
        const started = performance.now();
        const [claim] = await driver.store(context('bench'), [payload(`${index}`.padEnd(500_000, 'z'))]);
        await driver.retrieve({}, [claim!]);
        times.push(performance.now() - started);
      }
      times.sort((a, b) => a - b);
      console.log(`${name}: store + retrieve of a 500 KB payload, median ${times[10]!.toFixed(2)} ms of 20`);
      expect(times).toHaveLength(20);
    } finally {
      await driver.close();
    }
  });

  it('gives back what it stored, under a claim of run scope and SHA-256; storing again is the same claim', async () => {
    const { driver } = await make();
    try {
      const [claim] = await driver.store(context('run-1'), [payload('a'.repeat(1000))]);
      expect(Object.keys(claim!.claimData).sort()).toEqual(['scope', 'sha256']);
      expect(claim!.claimData.scope).toMatch(/^[0-9a-f]{64}$/);
      expect(claim!.claimData.sha256).toMatch(/^[0-9a-f]{64}$/);
      const [again] = await driver.store(context('run-1'), [payload('a'.repeat(1000))]);
      expect(again!.claimData).toEqual(claim!.claimData);
      const [other] = await driver.store(context('run-2'), [payload('a'.repeat(1000))]);
      expect(other!.claimData.scope).not.toBe(claim!.claimData.scope);
      const [back] = await driver.retrieve({}, [claim!]);
      expect(Buffer.from(back!.data!).toString()).toBe(JSON.stringify('a'.repeat(1000)));
      expect(Buffer.from(back!.metadata!.encoding!).toString()).toBe('json/plain');
    } finally {
      await driver.close();
    }
  });

  it('refuses a blob changed after it was written, leaves it, and repairs it when the payload is stored again', async () => {
    const { driver, tamper } = await make();
    try {
      const [claim] = await driver.store(context('run-1'), [payload('secret plan')]);
      await tamper(claim!);
      await expect(driver.retrieve({}, [claim!])).rejects.toThrow(
        /^The stored payload [0-9a-f]{64} in .+ was changed after it was written \(its SHA-256 is now [0-9a-f]{64}\); it is not used/,
      );
      await expect(driver.retrieve({}, [claim!])).rejects.toThrow(/was changed/);
      await driver.store(context('run-1'), [payload('secret plan')]);
      const [back] = await driver.retrieve({}, [claim!]);
      expect(Buffer.from(back!.data!).toString()).toBe(JSON.stringify('secret plan'));
    } finally {
      await driver.close();
    }
  });

  it('says a blob is missing, and refuses a claim it did not write', async () => {
    const { driver } = await make();
    try {
      const missing = { claimData: { scope: 'a'.repeat(64), sha256: 'b'.repeat(64) } };
      await expect(driver.retrieve({}, [missing])).rejects.toThrow(
        /stored payload b{64} .*(missing|cannot be read).*KEEL_PAYLOAD_STORE/,
      );
      const forged = { claimData: { scope: '../../etc', sha256: 'passwd' } };
      await expect(driver.retrieve({}, [forged])).rejects.toThrow(
        /a reference in history is not one Keel wrote/,
      );
    } finally {
      await driver.close();
    }
  });

  it('sweeps only the old blobs of runs Temporal no longer has', async () => {
    const { driver, age } = await make();
    try {
      const [gone] = await driver.store(context('gone'), [payload('old')]);
      const [kept] = await driver.store(context('still-there'), [payload('old too')]);
      const known = (owner: BlobOwner) => Promise.resolve(owner.workflowId === 'still-there');
      // Young blobs stay whoever owns them: a client stores a start's input before the run exists.
      expect(await driver.sweep(nobody, 24 * 3_600_000)).toBe(0);
      await age();
      expect(await driver.sweep(known, 24 * 3_600_000)).toBe(1);
      await expect(driver.retrieve({}, [gone!])).rejects.toThrow(/stored payload/);
      expect(await driver.retrieve({}, [kept!])).toHaveLength(1);
    } finally {
      await driver.close();
    }
  });
});
