// A worker thread does not inherit the TypeScript loader its process registered: it registers its own.
import { register } from "tsx/esm/api";

register();
await import("./thread-main.ts");
