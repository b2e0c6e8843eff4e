import { render } from "preact"
import "../shared/base.css"
import "./styles.css"
import { interceptLinks } from "../shared/router.ts"
import { App } from "./App.tsx"

const root = document.getElementById("app")!
interceptLinks(root)
render(<App />, root)
