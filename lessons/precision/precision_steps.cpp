#include "lessons/precision/precision_steps.h"

#include <fmt/format.h>

#include <cmath>

#include "kernels/precision/float_format.h"
#include "lessons/precision/exact_decimal.h"
#include "lessons/precision/precision_problem.h"

namespace dlsys::precision {

namespace {

// Significant digits shown before a long exact expansion is cut (fp32's 2^-149 has 105): every fp16 limit fits.
constexpr int kLimitDigits = 17;

std::string power_of_two(int exponent) { return fmt::format("2^{}", exponent); }

FormatLimit limit_row(const std::string& what, const std::string& power, double value, const Layout& layout) {
  const Rounded r = round_exact(value, layout);
  return {what, power, format_exact(value, kLimitDigits), bit_fields(r.bits, layout), bits_hex(r.bits, layout)};
}

FormatCard card_of(const Layout& l, bool chosen) {
  FormatCard card{l.name, l.exponent_bits, l.mantissa_bits, l.bias(), chosen, {}};
  const int m = l.mantissa_bits, bias = l.bias();
  card.limits.push_back(limit_row("largest finite", fmt::format("(2 - 2^-{}) x 2^{}", m, bias), max_finite(l), l));
  card.limits.push_back(limit_row("smallest normal", power_of_two(1 - bias), min_normal(l), l));
  card.limits.push_back(limit_row("smallest subnormal", power_of_two(1 - bias - m), min_subnormal(l), l));
  card.limits.push_back(limit_row("epsilon (gap above 1)", power_of_two(-m), epsilon(l), l));
  card.limits.push_back(limit_row("1 + epsilon", fmt::format("1 + 2^-{}", m), 1.0 + epsilon(l), l));
  return card;
}

struct ChosenValue {
  const char* text;
  const char* why;
};

// Values that each show one rule of rounding; fp16's limits sit at 65504 and 2^-24, bf16's at 3.39e38 and 2^-133.
constexpr ChosenValue kChosenValues[] = {
    {"0.1", "no finite binary form"},    {"0.333333333333333333", "1/3"},    {"1.0001", "1 + a small update"},
    {"1.00048828125", "1 + 2^-11"},      {"1.00146484375", "1 + 3 x 2^-11"}, {"65519", "just under 65520"},
    {"65520", "65504 + half a spacing"}, {"100000", "beyond fp16's range"},  {"0.00001", "1e-5"},
    {"2.98023223876953125e-8", "2^-25"}, {"3e-8", "just above 2^-25"},       {"3.4e38", "under fp32's largest"},
};

RoundingRow rounding_row(const std::string& text, const std::string& why, const Layout& layout) {
  RoundingRow row{text, why, "", "", "", "", ""};
  const std::optional<Rounded> r = round_decimal_text(text, layout);
  if (!r) {
    row.rounded = "not a number";
    return row;
  }
  const double input = *parse_real_text(text);
  row.rounded = format_exact(r->value, 20);
  row.bits = bit_fields(r->bits, layout);
  row.hex = bits_hex(r->bits, layout);
  if (std::isfinite(r->value) && input != 0) {
    const double relative = (r->value - input) / std::fabs(input);
    row.relative_error = relative == 0 ? "exact" : fmt::format("{:+.1e}", relative);
  } else {
    row.relative_error = "-";
  }
  if (r->overflow)
    row.note = "inf";
  else if (r->flushed)
    row.note = r->tie ? "tie, to 0" : "to 0";
  else if (r->tie)
    row.note = "tie, to even";
  else if (r->subnormal)
    row.note = "subnormal";
  return row;
}

Series update_line(const char* id, const char* name) {
  return Series{id, name, "theory", "updates applied", "", "weight - 1", "", {}};
}

}  // namespace

std::shared_ptr<const PrecisionSteps> make_precision_steps(const PrecisionParams& params) {
  auto steps = std::make_shared<PrecisionSteps>();
  const Format chosen = params.format;
  const Layout& layout = layout_of(chosen);
  steps->chosen_format = layout.name;
  // The chosen format first: on a projector it is the one in view.
  steps->cards.push_back(card_of(layout, true));
  for (Format f : {Format::Fp32, Format::Fp16, Format::Bf16})
    if (f != chosen) steps->cards.push_back(card_of(layout_of(f), false));

  const std::string& typed = params.round;
  if (!typed.empty()) steps->rounding.push_back(rounding_row(typed, "your value (round)", layout));
  for (const ChosenValue& v : kChosenValues) steps->rounding.push_back(rounding_row(v.text, v.why, layout));

  // A weight of 1 and updates of 1e-4 (half of fp16's spacing at 1 is 2^-11 = 4.9e-4, of bf16's 2^-8 = 3.9e-3).
  steps->update = 1e-4;
  steps->update_count = 100;
  const float update = float(steps->update);
  float fp16_weight = 1.0f, bf16_weight = 1.0f, master = 1.0f;
  Series fp16_line = update_line("fp16_weight", "fp16 weight, updated in fp16");
  Series bf16_line = update_line("bf16_weight", "bf16 weight, updated in bf16");
  Series master_line = update_line("fp32_master", "fp32 master weight");
  Series copy_line = update_line("fp16_copy_of_master", "fp16 copy of the master");
  for (int n = 0; n <= steps->update_count; ++n) {
    // Plotted as weight - 1: the changes are a thousandth of the weight.
    const double copy = round_to_fp16(master) - 1.0, fp16 = fp16_weight - 1.0, bf16 = bf16_weight - 1.0;
    const double full = master - 1.0;
    fp16_line.points.push_back({double(n), fp16, fp16, fp16});
    bf16_line.points.push_back({double(n), bf16, bf16, bf16});
    master_line.points.push_back({double(n), full, full, full});
    copy_line.points.push_back({double(n), copy, copy, copy});
    fp16_weight = round_to_fp16(fp16_weight + update);
    bf16_weight = round_to_bf16(bf16_weight + update);
    master = master + update;
  }
  steps->fp16_after = 1.0 + fp16_line.points.back().y;  // the points are weight - 1, after n updates
  steps->bf16_after = 1.0 + bf16_line.points.back().y;
  steps->master_after = 1.0 + master_line.points.back().y;
  steps->fp16_copy_after = 1.0 + copy_line.points.back().y;
  steps->update_series = {master_line, copy_line, fp16_line, bf16_line};

  steps->mixed_bytes = {{"fp16 or bf16 weights (the forward's copy)", 2},
                        {"fp16 or bf16 gradients", 2},
                        {"fp32 master weights", 4},
                        {"Adam first moment (fp32)", 4},
                        {"Adam second moment (fp32)", 4}};
  steps->fp32_bytes = {{"fp32 weights", 4}, {"fp32 gradients", 4}, {"Adam first moment", 4}, {"Adam second moment", 4}};
  const MlpShape shape = precision_mlp_shape();
  steps->mlp_parameters = parameter_count(shape);
  // Ring all-reduce: each rank sends 2 (N - 1) / N of the gradient bytes (see the allreduce lesson).
  const double ring_factor = 2.0 * (steps->allreduce_ranks - 1) / steps->allreduce_ranks;
  steps->allreduce_fp32_bytes = ring_factor * 4 * steps->seven_b_parameters;
  steps->allreduce_16bit_bytes = ring_factor * 2 * steps->seven_b_parameters;
  steps->fp16_max_log2 = std::log2(max_finite(layout_of(Format::Fp16)));
  return steps;
}

}  // namespace dlsys::precision
