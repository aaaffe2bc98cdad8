// Values derived from one stored version (its API row, its words, its parsed message), kept on the version
// itself for as long as the version lives. They were WeakMaps keyed by the version: under the 300k-row load
// the read models held ~300k versions with entries in five such maps, and V8 processes a WeakMap's entries
// (ephemerons) inside the full collection's pause: 69–210 ms of the 105–244 ms pauses measured there
// (`--trace-gc-nvp`, mark.ephemeron.marking), which every request in flight waited for.

/** One property per version for every memo, so versions keep one hidden class whatever was derived. */
const SLOTS = Symbol('version memos');
type Holder = { [SLOTS]?: unknown[] };
let nextSlot = 0;

/**
 * A WeakMap's get and set on versions, stored in a slot of the version: non-enumerable, so spreading,
 * JSON, hashing and equality never see it, and a copy of a version starts without the original's values.
 */
export class VersionMemo<V> {
  readonly #slot = nextSlot++;

  get(version: object): V | undefined {
    return (version as Holder)[SLOTS]?.[this.#slot] as V | undefined;
  }

  set(version: object, value: V): void {
    const holder = version as Holder;
    let slots = holder[SLOTS];
    if (!slots) {
      slots = [];
      Object.defineProperty(version, SLOTS, { value: slots });
    }
    slots[this.#slot] = value;
  }
}
