/** Stylesheets imported for their effect: Vite extracts them into the app's hashed CSS file. */
declare module "*.css"
