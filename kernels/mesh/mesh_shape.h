#pragma once
// A device mesh of dp x tp x pp ranks: every rank has coordinates (d, t, p), and belongs to one tensor-parallel group
// (the tp ranks of its replica and stage), one data-parallel group (the dp ranks holding the same shard of the same
// stage) and a pipeline with its neighbours (d, t, p - 1) and (d, t, p + 1).
//
// Ranks are numbered as Megatron-LM numbers them, tensor-parallel ranks adjacent, then data, then pipeline:
// rank = t + tp (d + dp p). On a real cluster adjacent ranks share a node, so the tp group, which talks on every layer,
// stays on the fast links inside it, and the pipeline, which talks least, crosses nodes.
namespace dlsys::mesh {

struct MeshShape {
  int dp = 1, tp = 1, pp = 1;
  int ranks() const { return dp * tp * pp; }
};

struct MeshCoord {
  int d = 0, t = 0, p = 0;
};

inline MeshCoord coord_of(const MeshShape& m, int rank) {
  return {(rank / m.tp) % m.dp, rank % m.tp, rank / (m.tp * m.dp)};
}
inline int rank_of(const MeshShape& m, const MeshCoord& c) { return c.t + m.tp * (c.d + m.dp * c.p); }

// Group g of each kind, and a rank's position in it (its t in a tp group, its d in a dp group).
inline int tp_group_count(const MeshShape& m) { return m.dp * m.pp; }
inline int tp_group_of(const MeshShape& m, const MeshCoord& c) { return c.d + m.dp * c.p; }
inline int dp_group_count(const MeshShape& m) { return m.tp * m.pp; }
inline int dp_group_of(const MeshShape& m, const MeshCoord& c) { return c.t + m.tp * c.p; }

}  // namespace dlsys::mesh
