// 20261125184922_contact: contacts (postal addresses with contact details, as Ever Gauzy's
// Contact) and an organization's own one, organization.contactId, so that
// relations[]=organization.contact loads it. Deleting a contact leaves its organization without one.
// Written by `npm run db:migration` for these differences:
//   - table contact is missing; contact (resources/contact.yaml) needs it
//   - organization.contactId is missing; fields.contactId needs uuid
//   - organization has no index starting with (contactId); the foreign key of fields.contactId needs one
import type { Knex } from 'knex';
import { recordColumns } from '../migration-helpers.js';

export async function up(knex: Knex) {
  await knex.schema.createTable('contact', (t) => {
    recordColumns(knex, t, 'tenant');
    t.string('name', 255);
    t.string('firstName', 255);
    t.string('lastName', 255);
    t.string('country', 64);
    t.string('city', 255);
    t.string('address', 255);
    t.string('address2', 255);
    t.string('postcode', 32);
    t.string('regionCode', 32);
    t.double('latitude');
    t.double('longitude');
    t.string('fax', 64);
    t.text('fiscalInformation');
    t.string('website', 2048);
    t.index(['tenantId', 'createdAt', 'id']);
    t.index(['tenantId', 'id']);
    t.index(['tenantId', 'name', 'id']);
    t.index(['tenantId', 'country', 'id']);
    t.index(['tenantId', 'city', 'id']);
  });
  await knex.schema.alterTable('organization', (t) => {
    t.uuid('contactId').references('id').inTable('contact').onDelete('SET NULL');
    t.index(['contactId']);
  });
}

export async function down(knex: Knex) {
  await knex.schema.alterTable('organization', (t) => {
    t.dropIndex(['contactId']);
    t.dropColumn('contactId');
  });
  await knex.schema.dropTableIfExists('contact');
}
