import { Effect, Layer } from "effect"
import { HttpApiBuilder, type HttpApi, type HttpApiGroup } from "effect/http-api"
import { orgStatus, type Installation, type Organization, type RosterEntry } from "../../../core/hub/Directory.ts"
import { Identity, type OrgView } from "../../../core/hub/Identity.ts"
import { IdentityTokens, type IdentityTokensConfig } from "../../../core/hub/IdentityTokens.ts"
import { Registry } from "../../../core/hub/Registry.ts"
import type { RegisteredService } from "../../../core/hub/ServiceStore.ts"
import { answerHub } from "../ErrorResponse.ts"
import type { AdminGroup } from "./AdminApi.ts"

/** The organization as operators see it: its derived status beside the stored timestamps. */
const orgOut = (org: Organization) => ({ ...org, status: orgStatus(org) })

const memberOut = ({ user, membership }: RosterEntry) => ({
  userId: user.id,
  email: user.email,
  name: user.name,
  verified: user.verified,
  role: membership.role,
  department: membership.department,
  departmentRole: membership.departmentRole,
  departments: membership.departments,
  roles: membership.roles,
  createdAt: membership.createdAt
})

const installationOut = ({ orgId: _orgId, ...installation }: Installation) => installation

/** Never a credential: the stored row's internal version stays inside too. */
const serviceOut = ({ version: _version, ...service }: RegisteredService) => service

const orgViewOut = (view: OrgView) => ({
  data: {
    org: orgOut(view.org),
    members: view.roster.map(memberOut),
    installations: view.installations.map(installationOut)
  }
})

/**
 * Handlers of the operator plane for any HttpApi holding `AdminGroup` (the hub's, or a test's). Failures of
 * the use cases become the envelope in the hub's dialect; every answer carries `data`. They need Identity,
 * Registry and Directory; development tokens are minted with `config.issuer` (`PLATFORM_ISSUER`).
 */
export const AdminHandlers = <ApiId extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<ApiId, Groups | typeof AdminGroup>,
  config: IdentityTokensConfig
) =>
  HttpApiBuilder.group(api as HttpApi.HttpApi<ApiId, typeof AdminGroup>, "admin", (handlers) =>
    Effect.gen(function* () {
      const identity = yield* Identity
      const registry = yield* Registry
      const tokens = yield* IdentityTokens
      return handlers.handleAll({
        createOrg: ({ payload }) =>
          answerHub(
            Effect.flatMap(identity.createOrg(payload), (org) => identity.getOrg(org.id)).pipe(
              Effect.map((view) => orgViewOut(view))
            )
          ),
        listOrgs: () => Effect.map(identity.listOrgs(), (orgs) => ({ data: { orgs: orgs.map(orgOut) } })),
        listUsers: () => Effect.map(identity.listUsers(), (users) => ({ data: { users } })),
        getOrg: ({ params }) => answerHub(Effect.map(identity.getOrg(params.orgId), orgViewOut)),
        updateOrg: ({ params, payload }) =>
          answerHub(
            Effect.flatMap(identity.updateOrg(params.orgId, payload), () =>
              Effect.map(identity.getOrg(params.orgId), orgViewOut)
            )
          ),
        createUser: ({ payload }) =>
          answerHub(Effect.map(identity.createUser(payload), (user) => ({ data: { user } }))),
        addMember: ({ params, payload }) =>
          answerHub(
            Effect.map(identity.addMember(params.orgId, payload), (entry) => ({ data: { member: memberOut(entry) } }))
          ),
        updateMember: ({ params, payload }) =>
          answerHub(
            Effect.map(identity.updateMember(params.orgId, params.email, payload), (entry) => ({
              data: { member: memberOut(entry) }
            }))
          ),
        removeMember: ({ params }) =>
          answerHub(Effect.as(identity.removeMember(params.orgId, params.email), { data: { removed: true as const } })),
        install: ({ params, payload }) =>
          answerHub(
            Effect.map(
              identity.install(params.orgId, params.serviceId, {
                consents: payload.consents,
                permissions: payload.permissions ?? []
              }),
              (installation) => ({ data: { installation: installationOut(installation) } })
            )
          ),
        uninstall: ({ params }) =>
          answerHub(
            Effect.map(identity.uninstall(params.orgId, params.serviceId), (installation) => ({
              data: { installation: installationOut(installation) }
            }))
          ),
        setFlag: ({ params, payload }) =>
          answerHub(Effect.map(identity.setFlag({ name: params.name, ...payload }), (flag) => ({ data: { flag } }))),
        registerService: ({ payload }) =>
          answerHub(
            Effect.map(registry.register(payload), ({ service, credentials }) => ({
              data: { service: serviceOut(service), credentials }
            }))
          ),
        listServices: () =>
          answerHub(Effect.map(registry.list(), (services) => ({ data: { services: services.map(serviceOut) } }))),
        getService: ({ params }) =>
          answerHub(Effect.map(registry.find(params.id), (service) => ({ data: { service: serviceOut(service) } }))),
        rotateCredential: ({ params }) =>
          answerHub(
            Effect.map(registry.rotate(params.id, params.kind), ({ service, value }) => ({
              data: { service: serviceOut(service), kind: params.kind, value }
            }))
          ),
        promoteService: ({ params }) =>
          answerHub(Effect.map(registry.promote(params.id), (service) => ({ data: { service: serviceOut(service) } }))),
        suspendService: ({ params }) =>
          answerHub(Effect.map(registry.suspend(params.id), (service) => ({ data: { service: serviceOut(service) } }))),
        mintToken: ({ payload }) => answerHub(Effect.map(tokens.mintFor(payload), (minted) => ({ data: minted })))
      })
    })
  ).pipe(Layer.provide(IdentityTokens.layer(config)))
