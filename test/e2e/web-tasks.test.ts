import { webTasksWalkThrough } from "../support/WebTasksWalkThrough.ts"

/**
 * The task inbox's web app in Chromium on its own tables (the embedded database): the walk-through of
 * test/support/WebTasksWalkThrough.ts, photographing its pages (SCREENSHOTS=1 writes them to docs/screenshots).
 */
webTasksWalkThrough({ name: "its own tables", screenshots: true })
