// Turns extractions into ledger rows: one episode node per message, the blocks and entities extracted
// from it, DERIVED_FROM (block → episode), MENTIONS (episode → entity) and the causal edges. Ids are
// derived from normalised content and the space, so saying the same thing again lands on the same
// block. Resolution looks only at rows known at the message's observed_at (no look-ahead), plus what
// earlier messages of the same request produced.
import { contentHash } from '../storage/hash.ts';
import type { TenantView } from '../storage/read/tenant-view.ts';
import { formatInstant, type Micros } from '../storage/time.ts';
import { nodeContentHash, type EdgeInput, type NodeInput } from '../storage/log/write-plan.ts';
import { normaliseName } from './local-entities.ts';
import { trimEndOf } from './trim.ts';
import type { Extraction } from './types.ts';

export interface MessageToWrite {
  /** Position of the message in the request. */
  index: number;
  content: string;
  observedAt: Micros;
  source: string;
}

export interface EpisodeSummary {
  message: number;
  episode_id: string;
  observed_at: string;
  blocks: string[];
  entities: string[];
  edges: { source_id: string; target_id: string; edge_type: string }[];
}

interface Known {
  id: string;
  knownAt: Micros;
}

export const normaliseStatement = (s: string): string =>
  trimEndOf(s.toLowerCase().replace(/[“”]/g, '"').replace(/[‘’]/g, "'").replace(/\s+/g, ' ').trim(), ' .!?;:,').trim();

const idOf = (prefix: string, space: string, key: string): string => `${prefix}-${contentHash({ space, key }).slice(0, 24)}`;

const BLOCK_KINDS = new Set(['claim', 'prediction']);

/**
 * What a space already holds, keyed by normalised statement and entity name, each with the earliest
 * instant it became known. Rows staged by earlier messages of the request are added as they are planned.
 */
export class SpaceIndex {
  readonly statements = new Map<string, Known>();
  readonly entities = new Map<string, Known>();

  constructor(
    private readonly view: TenantView,
    readonly space: string,
  ) {
    for (const n of view.nodesIn(space)) {
      if (n.statement === null) continue;
      if (BLOCK_KINDS.has(n.kind)) this.#note(this.statements, normaliseStatement(n.statement), n.id, n.known_at);
      else if (n.kind === 'entity') this.#note(this.entities, normaliseName(n.statement), n.id, n.known_at);
    }
  }

  #note(map: Map<string, Known>, key: string, id: string, knownAt: Micros): void {
    const seen = map.get(key);
    if (!seen || knownAt < seen.knownAt) map.set(key, { id, knownAt });
  }

  /** Entity names known at `at`, for an extractor to recognise. */
  entityNamesAt(at: Micros): Set<string> {
    const names = new Set<string>();
    for (const [name, k] of this.entities) if (k.knownAt <= at) names.add(name);
    return names;
  }

  statementAt(key: string, at: Micros): string | undefined {
    const k = this.statements.get(key);
    return k && k.knownAt <= at ? k.id : undefined;
  }

  entityAt(key: string, at: Micros): string | undefined {
    const k = this.entities.get(key);
    return k && k.knownAt <= at ? k.id : undefined;
  }

  stageStatement(key: string, id: string, at: Micros): void {
    this.#note(this.statements, key, id, at);
  }
  stageEntity(key: string, id: string, at: Micros): void {
    this.#note(this.entities, key, id, at);
  }

  /** A fresh id for content `node`: the derived one, unless rows of that id exist that this content would clash with. */
  freshId(base: string, node: NodeInput, at: Micros): string {
    const versions = this.view.versionsOf(base);
    if (versions.length === 0) return base;
    const hash = nodeContentHash(this.space, { ...node, id: base });
    // Same content again (a re-send): the write answers already_remembered. Otherwise the id is taken
    // by a row learned after this message, which it must neither see nor clash with.
    return versions.some((v) => v.hash === hash) ? base : `${base}-${at}`;
  }
}

export interface PlannedMessages {
  nodes: NodeInput[];
  edges: EdgeInput[];
  episodes: EpisodeSummary[];
  /** Blocks and entities that resolved onto rows already in the ledger (nothing is written for them). */
  resolved: string[];
}

function episodeName(m: MessageToWrite): string {
  const words = m.content.replace(/\s+/g, ' ').trim().split(' ');
  const snippet = words.slice(0, 10).join(' ');
  return `${m.source || 'message'}: ${snippet}${words.length > 10 ? '…' : ''}`;
}

export function planMessages(
  space: string,
  index: SpaceIndex,
  items: { message: MessageToWrite; extraction: Extraction }[],
): PlannedMessages {
  const out: PlannedMessages = { nodes: [], edges: [], episodes: [], resolved: [] };
  const staged = new Set<string>();
  const edgeKeys = new Set<string>();
  const addNode = (n: NodeInput & { id: string }): void => {
    if (staged.has(n.id)) return;
    staged.add(n.id);
    out.nodes.push(n);
  };
  for (const { message: m, extraction: x } of items) {
    const at = m.observedAt;
    const episode: NodeInput & { id: string } = {
      id: idOf('ep', space, `${m.source}\u001f${at}\u001f${m.content}`),
      kind: 'episode',
      statement: episodeName(m),
      payload: { source: m.source, content: m.content },
      asserted_at: at,
    };
    addNode(episode);
    const summary: EpisodeSummary = {
      message: m.index,
      episode_id: episode.id,
      observed_at: formatInstant(at),
      blocks: [],
      entities: [],
      edges: [],
    };
    const addEdge = (e: EdgeInput): void => {
      const key = `${e.source_id}\u001f${e.target_id}\u001f${e.edge_type}\u001f${at}`;
      if (e.source_id === e.target_id || edgeKeys.has(key)) return;
      edgeKeys.add(key);
      out.edges.push({ ...e, asserted_at: at });
      summary.edges.push({ source_id: e.source_id, target_id: e.target_id, edge_type: e.edge_type });
    };
    const blockIds = x.blocks.map((b) => {
      const key = normaliseStatement(b.statement);
      const known = index.statementAt(key, at);
      if (known !== undefined) {
        if (!staged.has(known)) out.resolved.push(known);
        return known;
      }
      const node: NodeInput = { kind: b.kind, statement: b.statement, payload: b.negated ? { negated: true } : {}, asserted_at: at };
      const id = index.freshId(idOf('b', space, key), node, at);
      addNode({ ...node, id });
      index.stageStatement(key, id, at);
      return id;
    });
    for (const id of new Set(blockIds)) {
      summary.blocks.push(id);
      addEdge({ source_id: id, target_id: episode.id, edge_type: 'DERIVED_FROM' });
    }
    for (const name of x.entities) {
      const key = normaliseName(name);
      if (!key) continue;
      let id = index.entityAt(key, at);
      if (id === undefined) {
        const node: NodeInput = { kind: 'entity', statement: name.trim(), asserted_at: at };
        id = index.freshId(idOf('e', space, key), node, at);
        addNode({ ...node, id });
        index.stageEntity(key, id, at);
      } else if (!staged.has(id)) out.resolved.push(id);
      if (!summary.entities.includes(id)) summary.entities.push(id);
      addEdge({ source_id: episode.id, target_id: id, edge_type: 'MENTIONS' });
    }
    for (const l of x.links) {
      const cause = blockIds[l.cause];
      const effect = blockIds[l.effect];
      if (cause === undefined || effect === undefined) continue;
      addEdge({ source_id: cause, target_id: effect, edge_type: l.type, mechanism: l.mechanism || null, confidence: l.confidence ?? null });
    }
    out.episodes.push(summary);
  }
  return out;
}
