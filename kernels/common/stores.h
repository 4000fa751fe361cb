#pragma once
// How a streaming kernel writes its output: through the caches, or with streaming (non-temporal) stores that skip
// them. Arrays far larger than the caches are written streaming: a cached store first reads the line it writes from
// memory (read for ownership), which adds a third to a copy's traffic and breaks the byte counts the lessons teach.
namespace dlsys {

enum class Stores { Cached, Streaming };

}  // namespace dlsys
