//===- TfmAttrs.cpp - tfm attributes ---------------------------------------===//

#include "tfm/Dialect/Tfm/IR/TfmAttrs.h"

#include "mlir/IR/Diagnostics.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tfm;

//===----------------------------------------------------------------------===//
// MaskAttr
//===----------------------------------------------------------------------===//

MaskAttr MaskAttr::getNone(MLIRContext *context) {
  return get(context, MaskKind::none, kUnbounded, kUnbounded);
}

MaskAttr MaskAttr::getCausal(MLIRContext *context) {
  return get(context, MaskKind::causal, kUnbounded, 0);
}

MaskAttr MaskAttr::getSlidingWindow(MLIRContext *context, int64_t window) {
  return get(context, MaskKind::sliding_window, window - 1, 0);
}

MaskAttr MaskAttr::getBand(MLIRContext *context, int64_t left, int64_t right) {
  return get(context, MaskKind::band, left, right);
}

LogicalResult MaskAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               MaskKind kind, int64_t left, int64_t right) {
  bool consistent = true;
  switch (kind) {
  case MaskKind::none:
    consistent = left == kUnbounded && right == kUnbounded;
    break;
  case MaskKind::causal:
    consistent = left == kUnbounded && right == 0;
    break;
  case MaskKind::sliding_window:
    if (left < 0)
      return emitError() << "sliding window size must be at least 1, got "
                         << left + 1;
    consistent = right == 0;
    break;
  case MaskKind::band:
    if (left < 0 || right < 0)
      return emitError() << "band extents must be non-negative, got <" << left
                         << ", " << right << ">";
    break;
  }
  // Only reachable from C++: the parser derives these bounds from the kind.
  if (!consistent)
    return emitError() << "bounds (" << left << ", " << right
                       << ") do not describe a '" << stringifyMaskKind(kind)
                       << "' mask";
  return success();
}

bool MaskAttr::isVisible(int64_t query, int64_t key) const {
  if (getLeft() != kUnbounded && key < query - getLeft())
    return false;
  return getRight() == kUnbounded || key <= query + getRight();
}

/// Intersecting bands takes the tighter bound on each side. The result
/// keeps the most specific spelling: a band that is one of the inputs keeps
/// that input's kind, and a band ending at the query is a sliding window.
MaskAttr MaskAttr::intersect(MaskAttr other) const {
  auto tighter = [](int64_t a, int64_t b) {
    if (a == kUnbounded)
      return b;
    if (b == kUnbounded)
      return a;
    return std::min(a, b);
  };
  int64_t left = tighter(getLeft(), other.getLeft());
  int64_t right = tighter(getRight(), other.getRight());
  for (MaskAttr candidate : {*this, other})
    if (candidate.getLeft() == left && candidate.getRight() == right)
      return candidate;
  // Neither input alone: both sides are bounded by some input, and a right
  // bound of 0 with a finite left bound is a window.
  if (right == 0)
    return getSlidingWindow(getContext(), left + 1);
  return getBand(getContext(), left, right);
}

/// mask ::= `<` (`none` | `causal` | `sliding_window` `<` W `>`
///               | `band` `<` L `,` R `>`) `>`
Attribute MaskAttr::parse(AsmParser &parser, Type) {
  MLIRContext *context = parser.getContext();
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseLess() || parser.parseKeyword(&keyword))
    return {};
  std::optional<MaskKind> kind = symbolizeMaskKind(keyword);
  if (!kind) {
    parser.emitError(loc) << "expected mask kind 'none', 'causal', "
                             "'sliding_window' or 'band', got '"
                          << keyword << "'";
    return {};
  }
  int64_t left = kUnbounded, right = kUnbounded;
  switch (*kind) {
  case MaskKind::none:
    break;
  case MaskKind::causal:
    right = 0;
    break;
  case MaskKind::sliding_window: {
    int64_t window;
    if (parser.parseLess())
      return {};
    SMLoc windowLoc = parser.getCurrentLocation();
    if (parser.parseInteger(window) || parser.parseGreater())
      return {};
    // Checked here, before `window - 1` could overflow.
    if (window < 1) {
      parser.emitError(windowLoc)
          << "sliding window size must be at least 1, got " << window;
      return {};
    }
    left = window - 1;
    right = 0;
    break;
  }
  case MaskKind::band:
    if (parser.parseLess() || parser.parseInteger(left) ||
        parser.parseComma() || parser.parseInteger(right) ||
        parser.parseGreater())
      return {};
    break;
  }
  if (parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(loc); }, context, *kind,
                    left, right);
}

void MaskAttr::print(AsmPrinter &printer) const {
  printer << "<" << stringifyMaskKind(getKind());
  if (getKind() == MaskKind::sliding_window)
    printer << "<" << getWindow() << ">";
  else if (getKind() == MaskKind::band)
    printer << "<" << getLeft() << ", " << getRight() << ">";
  printer << ">";
}

//===----------------------------------------------------------------------===//
// RopeAttr
//===----------------------------------------------------------------------===//

/// Passes apply theta as an f32 (`tfm.rope`'s attribute), so the f32 value
/// is the one that must be positive and finite: 1e-50 is not.
//===----------------------------------------------------------------------===//
// RopeScalingAttr
//===----------------------------------------------------------------------===//

LogicalResult
RopeScalingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        APFloat factor, APFloat lowFreqFactor,
                        APFloat highFreqFactor, int64_t originalMaxPositions) {
  double low = lowFreqFactor.convertToDouble(),
         high = highFreqFactor.convertToDouble();
  if (!(factor.convertToDouble() > 0) || std::isinf(factor.convertToDouble()))
    return emitError() << "rope scaling factor must be positive and finite, "
                          "got "
                       << factor.convertToDouble();
  if (!(low > 0) || !(high > low) || std::isinf(high))
    return emitError() << "rope scaling needs 0 < low_freq_factor < "
                          "high_freq_factor (finite), got "
                       << low << " and " << high;
  if (originalMaxPositions <= 0)
    return emitError() << "rope scaling original_max_positions must be "
                          "positive, got "
                       << originalMaxPositions;
  return success();
}

double RopeScalingAttr::inverseFrequency(int64_t pair, int64_t headDim,
                                         double theta) const {
  double frequency = std::pow(theta, -2.0 * pair / headDim);
  double factor = getFactor().convertToDouble();
  double low = getLowFreqFactor().convertToDouble();
  double high = getHighFreqFactor().convertToDouble();
  double original = getOriginalMaxPositions();
  double wavelength = 2 * M_PI / frequency;
  if (wavelength < original / high)
    return frequency;
  if (wavelength > original / low)
    return frequency / factor;
  double smooth = (original / wavelength - low) / (high - low);
  return (1 - smooth) * frequency / factor + smooth * frequency;
}

/// rope_scaling ::= `<` `llama3` `,` `factor` `=` float `,`
///   `low_freq_factor` `=` float `,` `high_freq_factor` `=` float `,`
///   `original_max_positions` `=` integer `>`
Attribute RopeScalingAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  double factor, low, high;
  int64_t original;
  if (parser.parseLess() || parser.parseKeyword("llama3") ||
      parser.parseComma() || parser.parseKeyword("factor") ||
      parser.parseEqual() || parser.parseFloat(factor) ||
      parser.parseComma() || parser.parseKeyword("low_freq_factor") ||
      parser.parseEqual() || parser.parseFloat(low) || parser.parseComma() ||
      parser.parseKeyword("high_freq_factor") || parser.parseEqual() ||
      parser.parseFloat(high) || parser.parseComma() ||
      parser.parseKeyword("original_max_positions") || parser.parseEqual() ||
      parser.parseInteger(original) || parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(loc); }, parser.getContext(),
                    APFloat(factor), APFloat(low), APFloat(high), original);
}

void RopeScalingAttr::print(AsmPrinter &printer) const {
  printer << "<llama3, factor = ";
  printer.printFloat(getFactor());
  printer << ", low_freq_factor = ";
  printer.printFloat(getLowFreqFactor());
  printer << ", high_freq_factor = ";
  printer.printFloat(getHighFreqFactor());
  printer << ", original_max_positions = " << getOriginalMaxPositions()
          << ">";
}

//===----------------------------------------------------------------------===//
// RopeAttr
//===----------------------------------------------------------------------===//

LogicalResult RopeAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               APFloat theta, RopeStyle, RopeScalingAttr) {
  float single = static_cast<float>(theta.convertToDouble());
  if (!(single > 0) || std::isinf(single))
    return emitError() << "rope theta must be positive and finite as an f32, "
                          "got "
                       << theta.convertToDouble();
  return success();
}

/// rope ::= `<` `theta` `=` float `,` `style` `=` (`half` | `interleaved`)
///          (`,` `scaling` `=` rope-scaling-attr)? `>`
Attribute RopeAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  double theta;
  StringRef style;
  if (parser.parseLess() || parser.parseKeyword("theta") ||
      parser.parseEqual() || parser.parseFloat(theta) ||
      parser.parseComma() || parser.parseKeyword("style") ||
      parser.parseEqual() || parser.parseKeyword(&style))
    return {};
  std::optional<RopeStyle> ropeStyle = symbolizeRopeStyle(style);
  if (!ropeStyle) {
    parser.emitError(loc) << "expected rope style 'half' or 'interleaved', got '"
                          << style << "'";
    return {};
  }
  RopeScalingAttr scaling;
  if (succeeded(parser.parseOptionalComma()) &&
      (parser.parseKeyword("scaling") || parser.parseEqual() ||
       parser.parseAttribute(scaling)))
    return {};
  if (parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(loc); }, parser.getContext(),
                    APFloat(theta), *ropeStyle, scaling);
}

void RopeAttr::print(AsmPrinter &printer) const {
  printer << "<theta = ";
  printer.printFloat(getTheta());
  printer << ", style = " << stringifyRopeStyle(getStyle());
  if (getScaling()) {
    printer << ", scaling = ";
    printer.printAttribute(getScaling());
  }
  printer << ">";
}
