// The go client's Worker through every conformance scenario (docs/client-conformance.md).
import { conformanceSuite } from "./scenarios";

conformanceSuite("go");
