#include "lessons/registry.h"

#include <fmt/format.h>

#include "engine/errors.h"
#include "engine/json_io.h"
#include "lessons/allreduce/allreduce_lesson.h"
#include "lessons/bubble/bubble_lesson.h"
#include "lessons/checkpointing/checkpointing_lesson.h"
#include "lessons/ddp/ddp_lesson.h"
#include "lessons/flash/flash_lesson.h"
#include "lessons/fusion/fusion_lesson.h"
#include "lessons/hardware/hardware_lesson.h"
#include "lessons/kvcache/kvcache_lesson.h"
#include "lessons/lora/lora_lesson.h"
#include "lessons/matmul/matmul_lesson.h"
#include "lessons/mesh/mesh_lesson.h"
#include "lessons/moe/moe_lesson.h"
#include "lessons/precision/precision_lesson.h"
#include "lessons/quant/quant_lesson.h"
#include "lessons/roofline/roofline_lesson.h"
#include "lessons/schedules/schedules_lesson.h"
#include "lessons/serving/serving_lesson.h"
#include "lessons/tensor/tensor_lesson.h"
#include "lessons/zero/zero_lesson.h"

namespace dlsys {

const std::vector<const Lesson*>& all_lessons() {
  static const MatmulLesson matmul;
  static const RooflineLesson roofline;
  static const FusionLesson fusion;
  static const HardwareLesson hardware;
  static const BubbleLesson bubble;
  static const SchedulesLesson schedules;
  static const FlashLesson flash;
  static const KvCacheLesson kvcache;
  static const AllreduceLesson allreduce;
  static const TensorLesson tensor;
  static const DdpLesson ddp;
  static const PrecisionLesson precision;
  static const QuantLesson quant;
  static const ServingLesson serving;
  static const ZeroLesson zero;
  static const MoeLesson moe;
  static const CheckpointingLesson checkpointing;
  static const LoraLesson lora;
  static const MeshLesson mesh;
  static const std::vector<const Lesson*> lessons = {
      &matmul, &roofline, &fusion, &hardware, &bubble,  &schedules, &allreduce, &tensor,        &ddp,  &zero,
      &mesh,   &moe,      &flash,  &kvcache,  &serving, &precision, &quant,     &checkpointing, &lora,
  };
  return lessons;
}

const Lesson& find_lesson(const std::string& id) {
  std::string known;
  for (const Lesson* lesson : all_lessons()) {
    if (lesson->id() == id) return *lesson;
    known += (known.empty() ? "" : ", ") + lesson->id();
  }
  throw BadInput(fmt::format("unknown lesson '{}'; known lessons: {}", clip_for_message(id), known));
}

}  // namespace dlsys
