import { Effect, Layer } from "effect"
import {
  defaultPreferences,
  Directory,
  type FlagSetting,
  type Installation,
  type Membership,
  type Organization,
  type Recipient,
  type User,
  type UserPreferences
} from "../../../core/hub/Directory.ts"

const byCreation = (a: Membership, b: Membership) =>
  a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0

export const DirectoryMemory = Layer.sync(Directory, () => {
  const orgs = new Map<string, Organization>()
  const users = new Map<string, User>()
  const userIdByEmail = new Map<string, string>()
  // Keyed `${orgId}\u0000${userId}`.
  const memberships = new Map<string, Membership>()
  const installations = new Map<string, Installation>()
  const flags = new Map<string, FlagSetting>()
  const preferences = new Map<string, UserPreferences>()
  const pair = (a: string, b: string) => `${a}\u0000${b}`

  return Directory.of({
    createOrg: (org) => Effect.sync(() => void orgs.set(org.id, org)),
    updateOrg: (org) => Effect.sync(() => void (orgs.has(org.id) && orgs.set(org.id, org))),
    findOrg: (orgId) => Effect.sync(() => orgs.get(orgId)),
    listOrgs: () => Effect.sync(() => [...orgs.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))),

    createUser: (user) =>
      Effect.sync(() => {
        if (userIdByEmail.has(user.email)) return "email_taken" as const
        users.set(user.id, user)
        userIdByEmail.set(user.email, user.id)
        return "created" as const
      }),
    updateUser: (user) =>
      Effect.sync(() => {
        const current = users.get(user.id)
        if (current === undefined) return
        userIdByEmail.delete(current.email)
        users.set(user.id, user)
        userIdByEmail.set(user.email, user.id)
      }),
    findUserByEmail: (email) =>
      Effect.sync(() => {
        const id = userIdByEmail.get(email)
        return id === undefined ? undefined : users.get(id)
      }),
    findUserById: (userId) => Effect.sync(() => users.get(userId)),
    listUsers: () =>
      Effect.sync(() => [...users.values()].sort((a, b) => (a.email < b.email ? -1 : a.email > b.email ? 1 : 0))),

    addMember: (membership) =>
      Effect.sync(() => {
        const key = pair(membership.orgId, membership.userId)
        if (memberships.has(key)) return "already_member" as const
        memberships.set(key, membership)
        return "added" as const
      }),
    updateMember: (membership) =>
      Effect.sync(() => {
        const key = pair(membership.orgId, membership.userId)
        if (!memberships.has(key)) return false
        memberships.set(key, membership)
        return true
      }),
    removeMember: (orgId, userId) => Effect.sync(() => memberships.delete(pair(orgId, userId))),
    membershipsOf: (userId) =>
      Effect.sync(() =>
        [...memberships.values()]
          .filter((m) => m.userId === userId)
          .sort(byCreation)
          .flatMap((membership) => {
            const org = orgs.get(membership.orgId)
            return org === undefined ? [] : [{ membership, org }]
          })
      ),
    roster: (orgId) =>
      Effect.sync(() =>
        [...memberships.values()]
          .filter((m) => m.orgId === orgId)
          .sort(byCreation)
          .flatMap((membership) => {
            const user = users.get(membership.userId)
            return user === undefined ? [] : [{ user, membership }]
          })
      ),

    saveInstallation: (installation) =>
      Effect.sync(() => void installations.set(pair(installation.orgId, installation.serviceId), installation)),
    findInstallation: (orgId, serviceId) => Effect.sync(() => installations.get(pair(orgId, serviceId))),
    installationsOf: (orgId) =>
      Effect.sync(() =>
        [...installations.values()]
          .filter((i) => i.orgId === orgId)
          .sort((a, b) => (a.serviceId < b.serviceId ? -1 : a.serviceId > b.serviceId ? 1 : 0))
      ),

    setFlag: (setting) => Effect.sync(() => void flags.set(pair(setting.name, setting.orgId ?? ""), setting)),
    flags: () => Effect.sync(() => [...flags.values()]),

    savePreferences: (userId, value) => Effect.sync(() => void preferences.set(userId, value)),
    preferences: (userId) => Effect.sync(() => preferences.get(userId) ?? defaultPreferences),
    recipients: (emails) =>
      Effect.sync(() => {
        const found = new Map<string, Recipient>()
        for (const email of emails) {
          const id = userIdByEmail.get(email)
          const user = id === undefined ? undefined : users.get(id)
          if (user !== undefined)
            found.set(email, { user, preferences: preferences.get(user.id) ?? defaultPreferences })
        }
        return found
      })
  })
})
