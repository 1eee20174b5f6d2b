import type { ThreadMain } from "../../threads/worker-pool.ts";
import { type PreparationKeys, preparation } from "./preparation.ts";

/** The preparation thread's module (see preparation-pool.ts): the keys are read once per thread. */
export default ((keys: PreparationKeys) => preparation(keys)) satisfies ThreadMain;
