import { maxRetryWaitSeconds } from "./RetryPolicy.ts"

/** The platform's limits, by name. Sizes are in characters unless the name says bytes. */

export const Hub = {
  eventBodyBytes: 64 * 1024,
  timestampSkewSeconds: 300,
  identityTokenLifetimeSeconds: 300,
  registryAuthorizeBodyBytes: 8 * 1024,
  registryTokenMinLength: 1,
  registryTokenMaxLength: 4096,
  registryDeptSlugsMax: 8,
  registryRoleSlugsMax: 8,
  registryPermissionsMax: 16,
  eventRedeliveryMinSeconds: 60,
  eventRedeliveryMaxSeconds: maxRetryWaitSeconds,
  serviceDataQueryMinLength: 2,
  serviceDataQueryMaxLength: 200,
  serviceDataLimitMin: 1,
  serviceDataLimitMax: 25,
  manifestTaglineMax: 140,
  openapiRequestsPerMinute: 60,
  matchedClientsCacheSeconds: 60,
  emailMax: 254,
  recordingIdMax: 64,
  landingPathMax: 512,
  orgIdMax: 64,
  /** Browsers one person keeps registered for web push; registering one more replaces their oldest. */
  pushSubscriptionsPerPerson: 10,
  /** Push requests (first sends and retries, over all of the person's browsers) one notification may make. */
  pushAttemptsPerNotification: 10
} as const

export const Decisions = {
  titleMax: 200,
  bodyMax: 32768,
  optionsMin: 2,
  optionsMax: 5,
  optionLabelMax: 120,
  optionDescriptionMax: 1000,
  optionConsequenceMax: 1000,
  factsMax: 20,
  linksMax: 10,
  factLabelMax: 80,
  factValueMax: 400,
  linkLabelMax: 80,
  roleSlugMax: 50,
  templateSlugMax: 50,
  roleNameMax: 80,
  roleDescriptionMax: 400,
  templateNameMax: 80,
  titleTemplateMax: 200,
  bodyTemplateMax: 32768,
  templateParamsMax: 20,
  templateParamKeyMax: 40,
  templateParamValueMax: 400,
  actionFieldsMin: 1,
  actionFieldsMax: 20,
  actionFieldValueMax: 400,
  infoQuestionMax: 2000,
  infoAnswerMax: 8192,
  rationaleMax: 2000,
  assignmentNoteMax: 500,
  actionLastErrorMax: 200,
  idempotencyKeyMax: 255,
  pageSizeMin: 1,
  pageSizeMax: 100,
  pageSizeDefault: 25,
  webhookTimestampSkewSeconds: 300,
  // "The maximum value of wait: not shown." Ours: 60 s, the value a polling client uses.
  waitMaxSeconds: 60
} as const

export const Idempotency = {
  keyMax: 255,
  // "Kept at least 24 hours."
  retentionSeconds: 24 * 60 * 60
} as const
