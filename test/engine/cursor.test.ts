// engine/resource/cursor.ts on its own: a cursor opens with the secret that sealed it, also once
// that secret is the previous one after a rotation, and with no other; its order values come back
// as sealed; a list of another tenant, order or filter refuses it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { HttpError } from '../../engine/errors.js';
import { ListCursors } from '../../engine/resource/cursor.js';
import { plan, resource, TENANT } from '../helpers/sql-plans.js';

const note = resource('work-note');
const OLD = 'o'.repeat(64);
const NEW = 'n'.repeat(64);
const VALUES = ['2026-01-01 00:00:00.000001+00', '7e1a0000-0000-4000-8000-0000000000ff'];

const refused = (open: () => unknown, message: RegExp) => {
  try {
    open();
  } catch (err) {
    assert.instance(err, HttpError);
    assert.is((err as HttpError).status, 400);
    assert.match((err as Error).message, message);
    return;
  }
  assert.unreachable('the cursor was taken');
};

test('a cursor sealed with the previous secret still opens after a rotation; with an unknown secret it does not', () => {
  const query = plan(note);
  const cursor = new ListCursors([OLD]).seal(note, TENANT, query, VALUES);
  assert.equal(new ListCursors([NEW, OLD]).open(note, TENANT, query, cursor), VALUES);
  refused(() => new ListCursors([NEW]).open(note, TENANT, query, cursor), /^cursor is not valid for this list/);
});

test('another tenant, filter or order: refused, the order naming the one it was made for', () => {
  const cursors = new ListCursors([NEW]);
  const cursor = cursors.seal(note, TENANT, plan(note), VALUES);
  refused(() => cursors.open(note, '7e1a0000-0000-4000-8000-000000000002', plan(note), cursor), /^cursor is not valid/);
  refused(() => cursors.open(note, TENANT, plan(note, { where: { minutes: 3 } }), cursor), /^cursor is not valid/);
  refused(() => cursors.open(note, TENANT, plan(note, { order: { minutes: 'ASC' } }), cursor), /^cursor was made for the order createdAt DESC, id DESC/);
});

test.run();
