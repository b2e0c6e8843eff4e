import { assert, describe, it } from "@effect/vitest"
import { notificationContent } from "../../core/hub/NotificationContent.ts"
import { chatMessage, chatText, emailMessage } from "../../core/hub/NotificationMessages.ts"
import { settled, type Notification } from "../../core/hub/NotificationStore.ts"

const base: Notification = {
  id: "01J00000000000000000000000",
  userId: "u1",
  email: "ann@acme.test",
  service: "decisions",
  eventId: "e1",
  type: "decisions.notification.created",
  title: "Refund <order> 42?",
  body: "Deploy bot asks for your decision.",
  url: "/apps/decisions/decision-1",
  category: "decision_assigned",
  createdAt: "2030-01-01T10:00:00.000Z",
  readAt: null
}
const actions = [
  { label: "Refund & close", url: "https://decisions.test/answer?token=aaa.111" },
  { label: "Decline", url: "https://decisions.test/answer?token=bbb.222" }
]
const withActions: Notification = { ...base, actions }

describe("the answers a notification's message offers", () => {
  it("are read from data.actions: absolute http(s) links with a label, anything else left out", () => {
    const content = notificationContent("decisions.notification.created", {
      title: "T",
      actions: [
        ...actions,
        { label: "Script", url: "javascript:alert(1)" },
        { label: "Relative", url: "/answer?token=x" },
        { label: "Elsewhere", url: "//evil.test/x" },
        { label: "", url: "https://decisions.test/a" },
        { url: "https://decisions.test/b" },
        "https://decisions.test/c"
      ]
    })
    assert.deepStrictEqual(content.actions, actions)
    assert.isUndefined(notificationContent("t", { title: "T" }).actions)
    assert.isUndefined(notificationContent("t", { title: "T", actions: "nope" }).actions)
  })

  it("the email shows a link for each, escaped in HTML, after the notification's own link", () => {
    const mail = emailMessage("https://hub.test", "ann@acme.test", [withActions])
    assert.include(
      mail.text,
      "Answer from here:\nRefund & close: https://decisions.test/answer?token=aaa.111\nDecline: https://decisions.test/answer?token=bbb.222"
    )
    assert.include(mail.html, `<a href="https://decisions.test/answer?token=aaa.111">Refund &amp; close</a>`)
    assert.notInclude(emailMessage("https://hub.test", "ann@acme.test", [base]).text, "Answer from here")
  })

  it("the person's chat message has url buttons in blocks and the same links in its text", () => {
    const message = chatMessage("https://hub.test", withActions)
    assert.include(message.text, chatText("https://hub.test", base))
    assert.include(message.text, "<https://decisions.test/answer?token=aaa.111|Refund &amp; close>")
    const buttons = (message.blocks as ReadonlyArray<{ type: string; elements?: ReadonlyArray<unknown> }>).find(
      (b) => b.type === "actions"
    )?.elements
    assert.deepStrictEqual(buttons, [
      {
        type: "button",
        action_id: "answer-0",
        text: { type: "plain_text", text: "Refund & close" },
        url: actions[0]!.url
      },
      { type: "button", action_id: "answer-1", text: { type: "plain_text", text: "Decline" }, url: actions[1]!.url }
    ])
    // Without answers: the plain message, no blocks.
    assert.deepStrictEqual(chatMessage("https://hub.test", base), { text: chatText("https://hub.test", base) })
  })

  it("a settled notification offers no answers any more", () => {
    const done = settled(
      { service: "decisions", url: base.url!, categories: [], body: "Answered.", atIso: "2030-01-01T11:00:00.000Z" },
      withActions
    )
    assert.isUndefined(done.actions)
    assert.strictEqual(done.body, "Answered.")
    assert.notInclude(emailMessage("https://hub.test", "ann@acme.test", [done]).text, "token=")
  })
})
