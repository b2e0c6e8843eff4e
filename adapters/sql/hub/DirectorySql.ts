import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import {
  ChannelNames,
  EmailModes,
  defaultPreferences,
  Directory,
  FlagNames,
  OrgRoles,
  type Installation,
  type Membership,
  type Organization,
  type Recipient,
  type User
} from "../../../core/hub/Directory.ts"
import { Tier } from "../../../core/kernel/Manifest.ts"

const OrgUnitRef = Schema.Struct({ id: Schema.String, slug: Schema.String, name: Schema.String })
const Slugs = Schema.Array(Schema.String)

const OrgRow = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  tier: Tier,
  created_at: Schema.Date,
  archived_at: Schema.NullOr(Schema.Date),
  merged_into_org_id: Schema.NullOr(Schema.String),
  deleted_at: Schema.NullOr(Schema.Date)
})

const UserRow = Schema.Struct({
  id: Schema.String,
  email: Schema.String,
  name: Schema.NullOr(Schema.String),
  verified: Schema.Boolean,
  created_at: Schema.Date
})

const MembershipRow = Schema.Struct({
  org_id: Schema.String,
  user_id: Schema.String,
  role: Schema.Literals(OrgRoles),
  department: Schema.NullOr(OrgUnitRef),
  department_role: Schema.NullOr(OrgUnitRef),
  departments: Slugs,
  roles: Slugs,
  created_at: Schema.Date
})

const InstallationRow = Schema.Struct({
  org_id: Schema.String,
  service_id: Schema.String,
  active: Schema.Boolean,
  epoch: Schema.Number,
  consents: Schema.Struct({ companyId: Schema.Boolean, accessClaims: Schema.Boolean, embed: Schema.Boolean }),
  permissions: Slugs,
  updated_at: Schema.Date
})

const FlagRow = Schema.Struct({
  name: Schema.Literals(FlagNames),
  org_id: Schema.NullOr(Schema.String),
  enabled: Schema.Boolean
})

const PreferencesRow = Schema.Struct({
  doc: Schema.Struct({
    serviceVisible: Schema.Record(Schema.String, Schema.Boolean),
    channels: Schema.Array(Schema.Literals(ChannelNames)),
    emailMode: Schema.optionalKey(Schema.Literals(EmailModes)),
    chatWebhook: Schema.optionalKey(Schema.String)
  })
})

// The org and user columns of a joined row, prefixed so they do not collide with the membership's.
const OrgJoined = Schema.Struct({
  o_id: Schema.String,
  o_name: Schema.String,
  o_tier: Tier,
  o_created_at: Schema.Date,
  o_archived_at: Schema.NullOr(Schema.Date),
  o_merged_into_org_id: Schema.NullOr(Schema.String),
  o_deleted_at: Schema.NullOr(Schema.Date)
})
const UserJoined = Schema.Struct({
  u_id: Schema.String,
  u_email: Schema.String,
  u_name: Schema.NullOr(Schema.String),
  u_verified: Schema.Boolean,
  u_created_at: Schema.Date
})
const MemberOfOrgRow = Schema.Struct({ ...MembershipRow.fields, ...OrgJoined.fields })
const RosterRow = Schema.Struct({ ...MembershipRow.fields, ...UserJoined.fields })

const iso = (date: Date | null) => (date === null ? null : date.toISOString())

const toOrg = (row: typeof OrgRow.Type): Organization => ({
  id: row.id,
  name: row.name,
  tier: row.tier,
  createdAt: row.created_at.toISOString(),
  archivedAt: iso(row.archived_at),
  mergedIntoOrgId: row.merged_into_org_id,
  deletedAt: iso(row.deleted_at)
})

const toUser = (row: typeof UserRow.Type): User => ({
  id: row.id,
  email: row.email,
  name: row.name,
  verified: row.verified,
  createdAt: row.created_at.toISOString()
})

const toMembership = (row: typeof MembershipRow.Type): Membership => ({
  orgId: row.org_id,
  userId: row.user_id,
  role: row.role,
  department: row.department,
  departmentRole: row.department_role,
  departments: row.departments,
  roles: row.roles,
  createdAt: row.created_at.toISOString()
})

const toInstallation = (row: typeof InstallationRow.Type): Installation => ({
  orgId: row.org_id,
  serviceId: row.service_id,
  active: row.active,
  epoch: row.epoch,
  consents: row.consents,
  permissions: row.permissions,
  updatedAt: row.updated_at.toISOString()
})

const json = (value: unknown) => JSON.stringify(value)

/**
 * The Directory port over the `hub` tables of 0002_directory.ts. The database holds the uniqueness rules
 * (one email, one membership per org and user), so a racing duplicate answers the conflict instead of
 * writing twice. Failures of SQL or of decoding our own rows are defects.
 */
export const DirectorySql: Layer.Layer<Directory, never, SqlClient.SqlClient> = Layer.effect(
  Directory,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const orgColumns = sql`id, name, tier, created_at, archived_at, merged_into_org_id, deleted_at`
    const userColumns = sql`id, email, name, verified, created_at`
    const membershipColumns = sql`m.org_id, m.user_id, m.role, m.department, m.department_role, m.departments,
      m.roles, m.created_at`
    const installationColumns = sql`org_id, service_id, active, epoch::float8 AS epoch, consents, permissions,
      updated_at`

    const findOrg = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: OrgRow,
      execute: (id) => sql`SELECT ${orgColumns} FROM hub.orgs WHERE id = ${id}`
    })
    const listOrgs = SqlSchema.findAll({
      Request: Schema.Void,
      Result: OrgRow,
      execute: () => sql`SELECT ${orgColumns} FROM hub.orgs ORDER BY id`
    })
    const findUserByEmail = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: UserRow,
      execute: (email) => sql`SELECT ${userColumns} FROM hub.users WHERE email = ${email}`
    })
    const findUserById = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: UserRow,
      execute: (id) => sql`SELECT ${userColumns} FROM hub.users WHERE id = ${id}`
    })
    // COLLATE "C": by the email's bytes, as the memory adapter sorts, whatever the database's collation.
    const listUsers = SqlSchema.findAll({
      Request: Schema.Void,
      Result: UserRow,
      execute: () => sql`SELECT ${userColumns} FROM hub.users ORDER BY email COLLATE "C"`
    })
    const membershipsOf = SqlSchema.findAll({
      Request: Schema.String,
      Result: MemberOfOrgRow,
      execute: (userId) => sql`SELECT ${membershipColumns}, o.id AS o_id, o.name AS o_name, o.tier AS o_tier,
          o.created_at AS o_created_at, o.archived_at AS o_archived_at,
          o.merged_into_org_id AS o_merged_into_org_id, o.deleted_at AS o_deleted_at
        FROM hub.memberships m JOIN hub.orgs o ON o.id = m.org_id
        WHERE m.user_id = ${userId} ORDER BY m.created_at, m.position`
    })
    const roster = SqlSchema.findAll({
      Request: Schema.String,
      Result: RosterRow,
      execute: (orgId) => sql`SELECT ${membershipColumns}, u.id AS u_id, u.email AS u_email, u.name AS u_name,
          u.verified AS u_verified, u.created_at AS u_created_at
        FROM hub.memberships m JOIN hub.users u ON u.id = m.user_id
        WHERE m.org_id = ${orgId} ORDER BY m.created_at, m.position`
    })
    const findInstallation = SqlSchema.findOneOption({
      Request: Schema.Struct({ orgId: Schema.String, serviceId: Schema.String }),
      Result: InstallationRow,
      execute: ({ orgId, serviceId }) =>
        sql`SELECT ${installationColumns} FROM hub.installations WHERE org_id = ${orgId} AND service_id = ${serviceId}`
    })
    const installationsOf = SqlSchema.findAll({
      Request: Schema.String,
      Result: InstallationRow,
      execute: (orgId) =>
        sql`SELECT ${installationColumns} FROM hub.installations WHERE org_id = ${orgId} ORDER BY service_id`
    })
    const flags = SqlSchema.findAll({
      Request: Schema.Void,
      Result: FlagRow,
      execute: () => sql`SELECT name, org_id, enabled FROM hub.flags`
    })
    const preferences = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: PreferencesRow,
      execute: (userId) => sql`SELECT doc FROM hub.preferences WHERE user_id = ${userId}`
    })

    // The addresses in one JSON parameter: one statement text whatever their number.
    const recipientRows = SqlSchema.findAll({
      Request: Schema.Array(Schema.String),
      Result: Schema.Struct({ ...UserRow.fields, preferences: Schema.NullOr(PreferencesRow.fields.doc) }),
      execute: (emails) => sql`SELECT u.id, u.email, u.name, u.verified, u.created_at, p.doc AS preferences
        FROM hub.users u LEFT JOIN hub.preferences p ON p.user_id = u.id
        WHERE u.email IN (SELECT jsonb_array_elements_text(${JSON.stringify(emails)}::jsonb))`
    })

    const orUndefined = <A, B>(found: Option.Option<A>, f: (a: A) => B) => Option.getOrUndefined(Option.map(found, f))

    return Directory.of({
      createOrg: (org) =>
        sql`INSERT INTO hub.orgs (id, name, tier, created_at, archived_at, merged_into_org_id, deleted_at)
          VALUES (${org.id}, ${org.name}, ${org.tier}, ${org.createdAt}, ${org.archivedAt}, ${org.mergedIntoOrgId},
            ${org.deletedAt})`.pipe(Effect.asVoid, Effect.orDie),
      updateOrg: (org) =>
        sql`UPDATE hub.orgs SET name = ${org.name}, tier = ${org.tier}, created_at = ${org.createdAt},
            archived_at = ${org.archivedAt}, merged_into_org_id = ${org.mergedIntoOrgId}, deleted_at = ${org.deletedAt}
          WHERE id = ${org.id}`.pipe(Effect.asVoid, Effect.orDie),
      findOrg: (orgId) =>
        findOrg(orgId).pipe(
          Effect.map((row) => orUndefined(row, toOrg)),
          Effect.orDie
        ),
      listOrgs: () =>
        listOrgs(undefined).pipe(
          Effect.map((rows) => rows.map(toOrg)),
          Effect.orDie
        ),

      createUser: (user) =>
        sql`INSERT INTO hub.users (id, email, name, verified, created_at)
          VALUES (${user.id}, ${user.email}, ${user.name}, ${user.verified}, ${user.createdAt})
          ON CONFLICT (email) DO NOTHING RETURNING id`.pipe(
          Effect.map((rows) => (rows.length === 1 ? ("created" as const) : ("email_taken" as const))),
          Effect.orDie
        ),
      updateUser: (user) =>
        sql`UPDATE hub.users SET email = ${user.email}, name = ${user.name}, verified = ${user.verified},
            created_at = ${user.createdAt}
          WHERE id = ${user.id}`.pipe(Effect.asVoid, Effect.orDie),
      findUserByEmail: (email) =>
        findUserByEmail(email).pipe(
          Effect.map((row) => orUndefined(row, toUser)),
          Effect.orDie
        ),
      findUserById: (userId) =>
        findUserById(userId).pipe(
          Effect.map((row) => orUndefined(row, toUser)),
          Effect.orDie
        ),
      listUsers: () =>
        listUsers(undefined).pipe(
          Effect.map((rows) => rows.map(toUser)),
          Effect.orDie
        ),

      addMember: (m) =>
        sql`INSERT INTO hub.memberships
            (org_id, user_id, role, department, department_role, departments, roles, created_at)
          VALUES (${m.orgId}, ${m.userId}, ${m.role}, ${json(m.department)}::jsonb, ${json(m.departmentRole)}::jsonb,
            ${json(m.departments)}::jsonb, ${json(m.roles)}::jsonb, ${m.createdAt})
          ON CONFLICT (org_id, user_id) DO NOTHING RETURNING org_id`.pipe(
          Effect.map((rows) => (rows.length === 1 ? ("added" as const) : ("already_member" as const))),
          Effect.orDie
        ),
      updateMember: (m) =>
        sql`UPDATE hub.memberships SET role = ${m.role}, department = ${json(m.department)}::jsonb,
            department_role = ${json(m.departmentRole)}::jsonb, departments = ${json(m.departments)}::jsonb,
            roles = ${json(m.roles)}::jsonb, created_at = ${m.createdAt}
          WHERE org_id = ${m.orgId} AND user_id = ${m.userId} RETURNING org_id`.pipe(
          Effect.map((rows) => rows.length === 1),
          Effect.orDie
        ),
      removeMember: (orgId, userId) =>
        sql`DELETE FROM hub.memberships WHERE org_id = ${orgId} AND user_id = ${userId} RETURNING org_id`.pipe(
          Effect.map((rows) => rows.length === 1),
          Effect.orDie
        ),
      membershipsOf: (userId) =>
        membershipsOf(userId).pipe(
          Effect.map((rows) =>
            rows.map((row) => ({
              membership: toMembership(row),
              org: toOrg({
                id: row.o_id,
                name: row.o_name,
                tier: row.o_tier,
                created_at: row.o_created_at,
                archived_at: row.o_archived_at,
                merged_into_org_id: row.o_merged_into_org_id,
                deleted_at: row.o_deleted_at
              })
            }))
          ),
          Effect.orDie
        ),
      roster: (orgId) =>
        roster(orgId).pipe(
          Effect.map((rows) =>
            rows.map((row) => ({
              user: toUser({
                id: row.u_id,
                email: row.u_email,
                name: row.u_name,
                verified: row.u_verified,
                created_at: row.u_created_at
              }),
              membership: toMembership(row)
            }))
          ),
          Effect.orDie
        ),

      saveInstallation: (i) =>
        sql`INSERT INTO hub.installations (org_id, service_id, active, epoch, consents, permissions, updated_at)
          VALUES (${i.orgId}, ${i.serviceId}, ${i.active}, ${i.epoch}::bigint, ${json(i.consents)}::jsonb,
            ${json(i.permissions)}::jsonb, ${i.updatedAt})
          ON CONFLICT (org_id, service_id) DO UPDATE SET active = EXCLUDED.active, epoch = EXCLUDED.epoch,
            consents = EXCLUDED.consents, permissions = EXCLUDED.permissions, updated_at = EXCLUDED.updated_at`.pipe(
          Effect.asVoid,
          Effect.orDie
        ),
      findInstallation: (orgId, serviceId) =>
        findInstallation({ orgId, serviceId }).pipe(
          Effect.map((row) => orUndefined(row, toInstallation)),
          Effect.orDie
        ),
      installationsOf: (orgId) =>
        installationsOf(orgId).pipe(
          Effect.map((rows) => rows.map(toInstallation)),
          Effect.orDie
        ),

      setFlag: (setting) =>
        sql`INSERT INTO hub.flags (name, org_id, enabled) VALUES (${setting.name}, ${setting.orgId}, ${setting.enabled})
          ON CONFLICT (name, (COALESCE(org_id, ''))) DO UPDATE SET enabled = EXCLUDED.enabled`.pipe(
          Effect.asVoid,
          Effect.orDie
        ),
      flags: () =>
        flags(undefined).pipe(
          Effect.map((rows) => rows.map((row) => ({ name: row.name, orgId: row.org_id, enabled: row.enabled }))),
          Effect.orDie
        ),

      savePreferences: (userId, value) =>
        sql`INSERT INTO hub.preferences (user_id, doc) VALUES (${userId}, ${json(value)}::jsonb)
          ON CONFLICT (user_id) DO UPDATE SET doc = EXCLUDED.doc`.pipe(Effect.asVoid, Effect.orDie),
      preferences: (userId) =>
        preferences(userId).pipe(
          Effect.map((row) => orUndefined(row, (r) => r.doc) ?? defaultPreferences),
          Effect.orDie
        ),
      recipients: (emails) =>
        emails.length === 0
          ? Effect.succeed(new Map<string, Recipient>())
          : recipientRows(emails).pipe(
              Effect.map(
                (rows) =>
                  new Map(
                    rows.map((row): [string, Recipient] => [
                      row.email,
                      { user: toUser(row), preferences: row.preferences ?? defaultPreferences }
                    ])
                  )
              ),
              Effect.orDie
            )
    })
  })
)
