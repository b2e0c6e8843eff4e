/** The hub's answers the workspace reads (the shapes of its routes). */

export interface Me {
  readonly user: { readonly email: string; readonly name: string | null }
  readonly organizations: ReadonlyArray<{ readonly id: string; readonly name: string; readonly role: string }>
}

export interface Notification {
  readonly id: string
  readonly service: string
  readonly type: string
  readonly title: string
  readonly body: string | null
  readonly url: string | null
  readonly createdAt: string
  readonly readAt: string | null
}

export interface NotificationPage {
  readonly items: ReadonlyArray<Notification>
  readonly unreadCount: number
  readonly nextCursor: string | null
}

export interface WorkspaceApp {
  readonly id: string
  readonly name: string
  readonly pages: boolean
  readonly embedUrl: string | null
  readonly appUrl: string | null
}

export interface PageEntry {
  readonly id: string
  readonly title: string
  readonly icon?: string | null
  readonly order?: number | null
}

export interface Block {
  readonly type: string
  readonly [field: string]: unknown
}

export interface PageDocument {
  readonly id: string
  readonly title: string
  readonly description?: string | null
  readonly blocks: ReadonlyArray<Block>
}

export interface ActionAnswer {
  readonly result?: unknown
  readonly refresh?: boolean
  readonly redirect?: string | null
  readonly message?: string
  /** A credential the action issued (a new key): shown once, never again. */
  readonly secret?: string
}
