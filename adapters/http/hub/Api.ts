import { HttpApi, OpenApi } from "effect/http-api"
import { reportAllIssues } from "../ParseOptions.ts"
import { UniformGroup } from "../uniform/UniformApi.ts"
import { AdminGroup } from "./AdminApi.ts"
import { ConformanceGroup } from "./ConformanceApi.ts"
import { SubjectContextGroup } from "./ContextApi.ts"
import { EventCatalogGroup, EventIngestGroup, EventsAdminGroup } from "./EventsApi.ts"
import { MyNotificationsGroup } from "./NotificationsApi.ts"
import { OrgChannelsGroup } from "./OrgChannelsApi.ts"
import { RegistryAuthorizeGroup } from "./RegistryApi.ts"
import { EmailSignInGroup, MeGroup } from "./SignInApi.ts"
import {
  OrgRosterGroup,
  ProviderGroup,
  RecapsDataGroup,
  RecordingGrantGroup,
  ShortLinkRedirectGroup
} from "./ServiceDataApi.ts"
import { ViewerLinkGroup } from "./ViewerLinkApi.ts"
import { WorkspaceGroup } from "./WorkspaceApi.ts"

/**
 * The hub's contract and the uniform service contract, in one document: event ingest and the
 * catalog, subject context, the service-data plane, registry authorization, and the operator plane.
 */
export class HubApi extends HttpApi.make("hub")
  .add(UniformGroup)
  .add(EventIngestGroup)
  .add(EventCatalogGroup)
  .add(SubjectContextGroup)
  .add(RegistryAuthorizeGroup)
  .add(AdminGroup)
  .add(EventsAdminGroup)
  .add(ConformanceGroup)
  .add(EmailSignInGroup)
  .add(MeGroup)
  .add(MyNotificationsGroup)
  .add(OrgChannelsGroup)
  .add(ViewerLinkGroup)
  .add(OrgRosterGroup)
  .add(RecapsDataGroup)
  .add(RecordingGrantGroup)
  .add(ProviderGroup)
  .add(ShortLinkRedirectGroup)
  .add(WorkspaceGroup)
  .annotate(HttpApi.ParseOptions, reportAllIssues)
  .annotate(HttpApi.HeadersParseOptions, {})
  .annotateMerge(
    OpenApi.annotations({ title: "Platform hub", description: "The hub and the uniform service contract" })
  ) {}
