// The composite ops of Functional.h: values and gradients against PyTorch 1.13, finite-
// difference gradchecks, error messages, and what a trace of them records.
#include "kiln/core/Functional.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "kiln/core/Dispatcher.h"
#include "test/unit/frontend/Golden.h"
#include "test/unit/frontend/GradCheck.h"
#include "test/unit/frontend/core/ExpectError.h"

namespace kiln {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// ---- golden values: PyTorch 1.13 on the inputs below (script at the end of this file) ----

const std::vector<double> kRelu6 = {  // [3, 4]
    0.0, 0.0, 0.0, 0.0, 0.2, 0.7, 1.5, 3.0, 5.9, 6.0, 6.0, 0.0};
const std::vector<double> kRelu6Grad = {  // [3, 4]
    0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0};
const std::vector<double> kGelu = {  // [3, 4]
    -0.015524163314440398, -0.15865525393145702, -0.1146265733433142, 0.0, 0.11585194188782061,
    0.5306254434438489, 1.399789198096713, 2.99595030590511, 5.899999989276703,
    5.999999994080474, 6.49999999973896, -4.428829525338074e-12};
const std::vector<double> kGeluGrad = {  // [3, 4]
    -0.03761108590814519, -0.08331547058768635, 0.26767223317289013, 0.5, 0.6574682482341941,
    0.9766141011336599, 1.1274691922299795, 1.011945647204184, 1.0000000631754975,
    1.0000000354687093, 1.0000000016950519, -3.142238130177353e-11};
const std::vector<double> kGeluTanh = {  // [3, 4]
    -0.015084266089998577, -0.1588080093917233, -0.11462907645724074, 0.0, 0.11585142978210627,
    0.5305701347051167, 1.3995715769802328, 2.996362607918227, 5.899999999792288,
    5.9999999999156035, 6.499999999999372, -7.882583474838611e-16};
const std::vector<double> kGeluTanhGrad = {  // [3, 4]
    -0.03795157621266618, -0.08296408384578258, 0.26770454836119817, 0.5, 0.6574581491956996,
    0.976357218656104, 1.127710793151433, 1.0115841666309695, 1.0000000018440425,
    1.0000000007709977, 1.0000000000065836, -9.652943078667215e-15};
const std::vector<double> kGeluF32 = {  // [3, 4]
    -0.0155241787, -0.158655286, -0.114626586, 0.0, 0.115851954, 0.530625463, 1.39978909,
    2.99595022, 5.9000001, 6.0, 6.5, 0.0};
const std::vector<double> kGeluTanhF32 = {  // [3, 4]
    -0.0150842965, -0.158807993, -0.114629082, 0.0, 0.115851425, 0.530570149, 1.39957154,
    2.99636269, 5.9000001, 6.0, 6.5, -0.0};
const std::vector<double> kSilu = {  // [3, 4]
    -0.18964545005310887, -0.2689414213699951, -0.1276672449565023, 0.0, 0.1099667994624956,
    0.46773144051771626, 1.2263617142904655, 2.8577223804672998, 5.883881431498235,
    5.985164261060192, 6.490242315331209, -0.0058534152734278965};
const std::vector<double> kSiluGrad = {  // [3, 4]
    -0.09940111134152683, 0.07232948812851325, 0.3522199896811173, 0.5, 0.59933731185485,
    0.8233867834733425, 1.041294154299143, 1.0881041060151693, 1.0133425724420508,
    1.0123264325915249, 1.008241854348962, -0.005024164886978446};
const std::vector<double> kLeakyRelu = {  // [3, 4]
    -0.5, -0.2, -0.06, 0.0, 0.2, 0.7, 1.5, 3.0, 5.9, 6.0, 6.5, -1.42};
const std::vector<double> kLeakyReluGrad = {  // [3, 4]
    0.2, 0.2, 0.2, 0.2, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.2};
const std::vector<double> kClamp = {  // [3, 4]
    -1.0, -1.0, -0.3, 0.0, 0.2, 0.7, 1.5, 3.0, 3.0, 3.0, 3.0, -1.0};
const std::vector<double> kClampGrad = {  // [3, 4]
    0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0};
const std::vector<double> kClampMin = {  // [3, 4]
    0.5, 0.5, 0.5, 0.5, 0.5, 0.7, 1.5, 3.0, 5.9, 6.0, 6.5, 0.5};
const std::vector<double> kClampMax = {  // [3, 4]
    -2.5, -1.0, -0.3, -0.3, -0.3, -0.3, -0.3, -0.3, -0.3, -0.3, -0.3, -7.1};
const std::vector<double> kClampCrossed = {  // [3, 4]
    2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0};
const std::vector<double> kSoftmax1 = {  // [3, 5]
    0.055465795053219656, 0.11237845784133021, 0.20141872135743996, 0.2951051387021959,
    0.3356318870458141, 0.4310250129408078, 0.2908214721498847, 0.1609421296815739,
    0.07914257689106298, 0.03806880833667059, 0.31298609986326464, 0.19188929433450969,
    0.14834178939776194, 0.14972462393892386, 0.19705819246553996};
const std::vector<double> kSoftmax0 = {  // [3, 5]
    0.15405883788220454, 0.3544494634275157, 0.6364246169481848, 0.8313614992707733,
    0.9076924073218455, 0.8088287312083324, 0.6197127695563878, 0.3435655426162061,
    0.15063158450563352, 0.0695564633254205, 0.03711243090946309, 0.025837767016096545,
    0.02000984043560924, 0.018006916223593353, 0.022751129352733875};
const std::vector<double> kLogSoftmax1 = {  // [3, 5]
    -2.8919887535713493, -2.185883016106869, -1.6023693469232871, -1.220423583758234,
    -1.0917402938675256, -0.8415891558968879, -1.2350456978441233, -1.8267104215843737,
    -2.536504282384088, -3.2683600109775512, -1.1615964988106509, -1.6508366652552147,
    -1.9082362799329309, -1.8989575125133504, -1.6242562006380468};
const std::vector<double> kLogSoftmaxM2 = {  // [3, 5]
    -1.8704206853662788, -1.0371895004993936, -0.4518893017012739, -0.184690561546215,
    -0.09684971622856843, -0.21216808865219652, -0.4784991831970272, -1.0683773773227399,
    -1.8929182611324484, -2.6656164342989737, -3.2938033005453735, -3.6559180195875323,
    -3.911531104650711, -4.016999360241124, -3.783140492938883};
const std::vector<double> kSoftmaxGrad = {  // [3, 5]
    -0.03530280755002792, -0.021456478676085085, 0.019515634604198407, 0.046188850530057945,
    -0.008945198908143222, 0.19502266029726562, -0.009681886291640398, -0.0812361046482329,
    -0.06699364843339421, -0.037111020923998095, -0.22095694859394083, -0.07161212163360545,
    0.014003636752564906, 0.08719070964125564, 0.19137472383372575};
const std::vector<double> kSoftmaxLarge = {  // [3]
    0.0900305733, 0.244728476, 0.665240943};
const std::vector<double> kLogSoftmaxLarge = {  // [3]
    -2.40760589, -1.40760589, -0.407605946};
const std::vector<double> kVarAll = {  // []
    2.2927673080273396};
const std::vector<double> kVar1 = {  // [3]
    0.5544830279633854, 0.9591614193530528, 0.09196493983637416};
const std::vector<double> kVar0Biased = {  // [1, 5]
    1.5858105914314422, 1.9184293765757963, 2.2703002299241812, 2.4573725686420915,
    2.381795795996083};
const std::vector<double> kStd1 = {  // [3]
    0.7446361715384134, 0.9793678672251059, 0.30325721728653743};
const std::vector<double> kStdAll = {  // []
    1.5141886632871544};
const std::vector<double> kVar1F32 = {  // [3]
    0.554482996, 0.959161401, 0.0919649228};
const std::vector<double> kLayerNorm4 = {  // [2, 3, 4]
    -1.4525230573023225, -0.33383893167854534, 0.5906224402742551, 1.1957395487066127,
    1.0328232200987213, 0.7077441185493766, -0.19301803368430942, -1.5475493049637894,
    1.4162554537148582, 0.3783430154578739, -0.5503808227952633, -1.24421764637747,
    -0.8452129478523209, -0.8161714518864486, 0.0436126853699183, 1.6177717143688524,
    -1.3840438776903559, -0.41492928842493515, 0.5160585021303346, 1.2829146639849565,
    0.3914440053230879, 0.9963997689637533, 0.27817582132739893, -1.6660195956142403};
const std::vector<double> kLayerNormAffine = {  // [2, 3, 4]
    -0.0017560728256855974, 0.5686697838823079, 1.2064058950656382, 1.3971943625657655,
    0.93495153207506, 0.08372041184043548, -0.5882174222394811, -0.597057592592376,
    0.10910844914602903, 1.0867388420551543, 1.6694073249452577, 1.3994161900150621,
    -0.3225712158578161, -0.6281225256640233, -0.6964930342015255, -0.5151442109894598,
    -0.28526941484691914, -0.2636913505619106, -0.5492440797681277, -0.9805760387743517,
    -1.2342296566961304, -1.0626585650007176, -0.5007025329274558, 0.11954623401689031};
const std::vector<double> kLayerNormF32 = {  // [2, 3, 4]
    -0.329915285, 0.152182043, 1.0688858, 1.53732073, 0.404554695, 0.899367869, 0.31380254,
    -1.13422465, 0.517866731, 0.663070083, -0.030537162, -0.838825822, -0.150442839,
    -0.193822071, 0.541810036, 1.94831586, -0.309678286, 0.0940113813, 0.997039139, 1.62221599,
    0.215014219, 1.10643697, 0.767825425, -1.24959648};
const std::vector<double> kBnTrain1 = {  // [2, 3, 2, 2]
    0.5933527608587187, 1.302009213489474, 1.8876307499325122, 2.2709562425050875,
    -0.3999049446501919, -0.31134532491087524, -0.06595534660347253, 0.3030526078845378,
    -0.7484228545661289, -1.7832171714078995, -2.7091509152540945, -3.400903297626685,
    -1.5845085591954622, -1.575196273435036, -1.2995026387881994, -0.7947414953670954,
    1.1719058826952395, 0.7144145320240877, 0.27492175534189556, -0.08708916178122002,
    1.6736367046742375, 1.8486015620546261, 1.6408773644883112, 1.0785786076376327};
const std::vector<double> kBnMean1 = {  // [3]
    0.06080898304411966, -0.07619680188117198, 0.3180150261519298};
const std::vector<double> kBnVar1 = {  // [3]
    1.1552939422833517, 1.8734522485790666, 0.6786612910122222};
const std::vector<double> kBnTrain2 = {  // [2, 3, 2, 2]
    0.5933535890667111, 1.3020112313430598, 1.8876337508888097, 2.2709598869628747,
    -0.39990844488842825, -0.3113483084343056, -0.06595689836109966, 0.303053209160926,
    -0.7484236950267175, -1.7832199513410893, -2.709155430626973, -3.400909109522719,
    -1.5845113870370446, -1.575199085643769, -1.2995049881806884, -0.7947429973999538,
    1.1719115534305165, 0.7144175334552814, 0.2749221924844713, -0.08709083684736231,
    1.6736404037806702, 1.8486055890905244, 1.640881002195255, 1.0785811914510486};
const std::vector<double> kBnMean2 = {  // [3]
    0.09634605082794702, 0.23902927454460127, 0.4822435758405963};
const std::vector<double> kBnVar2 = {  // [3]
    2.0609403171884235, 1.979916018037426, 1.5254403259598885};
const std::vector<double> kBnEval = {  // [2, 3, 2, 2]
    0.2079556021941226, 0.9457362140086142, 1.5554254560168452, 1.954504749494532,
    -0.4257152908431538, -0.3752583153330558, -0.23544700898004095, -0.025204176214501668,
    -0.8169484920741638, -2.002052419177867, -3.0624831716573007, -3.8547164218699175,
    -2.0594108363556187, -2.049715836951869, -1.7626918245576915, -1.2371861527601264,
    0.4698262737585022, 0.20916989396774935, -0.041231771432281565, -0.24748803171701111,
    1.9569286433312219, 2.1573081160553107, 1.9194108274022, 1.275435059364458};
const std::vector<double> kBnNcF32 = {  // [4, 3]
    -0.166281253, 0.723935843, 1.1695435, 0.783611655, -0.488747895, -1.5208559, -1.56717134,
    -1.38433945, -0.183064491, 0.949840963, 1.14915144, 0.534376919};
const std::vector<double> kBnNcMeanF32 = {  // [3]
    0.0354724824, 0.0762805194, 0.0708178133};
const std::vector<double> kBnNcVarF32 = {  // [3]
    0.90225786, 0.863672495, 0.870471299};
const std::vector<double> kMseNone = {  // [3, 4]
    0.9512559904101627, 0.32764407733636663, 0.004877082037936651, 0.7362278919788006,
    2.6930165456029167, 5.023116767620445, 6.230575749740052, 5.29092590622251,
    2.6787319706723505, 0.34844854859383345, 0.4394374502764397, 3.563712405674878};
const std::vector<double> kMseSum = {  // []
    28.28797038616669};
const std::vector<double> kMseMean = {  // []
    2.357330865513891};
const std::vector<double> kNllNone = {  // [4]
    -0.9057725707581366, -1.8579194300077384, 1.6863754837128344, -0.21322338756244533};
const std::vector<double> kNllSum = {  // []
    -1.290539904615486};
const std::vector<double> kNllMean = {  // []
    -0.3226349761538715};
const std::vector<double> kNllWeighted = {  // []
    -0.5199740443633323};
const std::vector<double> kNllIgnored = {  // []
    0.18912650846408416};
const std::vector<double> kNllIgnoredNone = {  // [4]
    -0.9057725707581366, 0.0, 1.6863754837128344, -0.21322338756244533};
const std::vector<double> kNllIgnoredWeighted = {  // []
    -0.3109200778563938};
const std::vector<double> kNll3d = {  // [2, 2]
    -0.1996668332936563, -1.8579194300077384, -0.16300430352053824, 0.5688514250729251};
const std::vector<double> kNll3dMean = {  // []
    -0.4129347854372519};
const std::vector<double> kNll1d = {  // []
    -1.8712320031067717};
const std::vector<double> kCeMean = {  // []
    1.6621490806183385};
const std::vector<double> kCeNone = {  // [4]
    2.185883016106869, 0.8415891558968879, 1.6242562006380468, 1.9968679498315498};
const std::vector<double> kCeWeightedIgnored = {  // []
    2.032646923717993};
const std::vector<double> kCeGrad = {  // [4, 5]
    0.013866448763304916, -0.22190538553966743, 0.05035468033935999, 0.07377628467554899,
    0.08390797176145352, -0.14224374676479803, 0.07270536803747119, 0.040235532420393474,
    0.01978564422276575, 0.00951720208416765, 0.07824652496581615, 0.047972323583627415,
    0.03708544734944048, 0.03743115598473096, -0.20073545188361502, 0.008397536753434808,
    0.01629819878318018, -0.2160600438428282, 0.06866726222226432, 0.12269704608394887};
const std::vector<double> kCeProbs = {  // []
    2.1556853273308487};
const std::vector<double> kCeProbsWeightedSum = {  // []
    8.184347426989305};
const std::vector<double> kCeF32 = {  // []
    1.66214907};
const std::vector<double> kEmbedding = {  // [2, 2, 3]
    1.8712320031067717, 1.9999152929974802, 1.8579194300077384, -1.9703555630077185,
    -1.961076795588138, -1.6863754837128344, 0.1996668332936563, 0.9057725707581366,
    1.4892862399417186, 1.8712320031067717, 1.9999152929974802, 1.8579194300077384};
const std::vector<double> kEmbeddingGrad = {  // [5, 3]
    -0.058374143427580086, -0.5298361409084934, -0.8715757724135882, -0.8012539267690396,
    -0.23923696848246212, 0.3813535433695887, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.9916648104524686,
    0.8084964038195901, 0.4273798802338298};

// amp·sin(freq·i + phase) for element i in row-major order: varied values with no ties.
Tensor wave(Shape shape, double freq = 0.37, double phase = 0.1, double amp = 2.0,
            DType dtype = kFloat64) {
  std::vector<double> values(numel(shape));
  for (size_t i = 0; i < values.size(); ++i) values[i] = amp * std::sin(freq * double(i) + phase);
  return tensor(values, shape).to(dtype);
}

// Values on both sides of every kink the activations have (0, 6, the clamp bounds -1, 3).
Tensor kinks(DType dtype = kFloat64) {
  return tensor(std::vector<double>{-2.5, -1.0, -0.3, 0.0, 0.2, 0.7, 1.5, 3.0, 5.9, 6.0, 6.5, -7.1},
                Shape{3, 4})
      .to(dtype);
}

Tensor f64(std::vector<double> values, Shape shape) { return tensor(values, shape); }
Tensor i64(std::vector<int64_t> values, Shape shape) { return tensor(values, shape); }

// ---- checks -------------------------------------------------------------------------------

// `values` of `shape` and `dtype` as a golden tensor, compared by golden::matchesGolden
// (relative 1e-6 for float64, 1e-5 for float32; NaN meets NaN).
::testing::AssertionResult matches(const Tensor& actual, const std::vector<double>& values,
                                   const Shape& shape, DType dtype = kFloat64) {
  golden::GoldenTensor expected{dtype, shape, {}, {}};
  if (isFloatingPoint(dtype)) expected.floats = values;
  else expected.ints.assign(values.begin(), values.end());
  if (int64_t(values.size()) != numel(shape))
    return ::testing::AssertionFailure() << values.size() << " expected values for shape "
                                         << formatShape(shape);
  return golden::matchesGolden(actual, expected);
}

// The gradient backward() gives for sum(f(x)), to compare with PyTorch's autograd.
Tensor gradOfSum(const std::function<Tensor(const Tensor&)>& f, const Tensor& x) {
  Tensor leaf = x.detach().clone();
  leaf.requires_grad_();
  sum(f(leaf)).backward();
  return leaf.grad();
}

using testing::at;
using testing::gradcheck;

// ---- activations ----------------------------------------------------------------------------

TEST(FunctionalTest, ActivationsMatchPyTorch) {
  const Tensor x = kinks();
  EXPECT_TRUE(matches(relu6(x), kRelu6, {3, 4}));
  EXPECT_TRUE(matches(gelu(x), kGelu, {3, 4}));
  EXPECT_TRUE(matches(gelu(x, "tanh"), kGeluTanh, {3, 4}));
  EXPECT_TRUE(matches(silu(x), kSilu, {3, 4}));
  EXPECT_TRUE(matches(leaky_relu(x, 0.2), kLeakyRelu, {3, 4}));
  EXPECT_TRUE(matches(gelu(kinks(kFloat32)), kGeluF32, {3, 4}, kFloat32));
  EXPECT_TRUE(matches(gelu(kinks(kFloat32), "tanh"), kGeluTanhF32, {3, 4}, kFloat32));
}

// Including the kinks themselves, where a composition could pick another subgradient.
TEST(FunctionalTest, ActivationGradientsMatchPyTorchAtKinks) {
  const Tensor x = kinks();
  using Unary = Tensor (*)(const Tensor&);
  const std::vector<std::pair<Unary, const std::vector<double>*>> cases = {
      {[](const Tensor& t) { return relu6(t); }, &kRelu6Grad},
      {[](const Tensor& t) { return gelu(t); }, &kGeluGrad},
      {[](const Tensor& t) { return gelu(t, "tanh"); }, &kGeluTanhGrad},
      {[](const Tensor& t) { return silu(t); }, &kSiluGrad},
      {[](const Tensor& t) { return leaky_relu(t, 0.2); }, &kLeakyReluGrad},
      {[](const Tensor& t) { return clamp(t, -1.0, 3.0); }, &kClampGrad},
  };
  for (size_t i = 0; i < cases.size(); ++i)
    EXPECT_TRUE(matches(gradOfSum(cases[i].first, x), *cases[i].second, {3, 4})) << "case " << i;
}

TEST(FunctionalTest, ActivationGradCheck) {
  // Spans [-1.5, 6.5] (both relu6 kinks) without landing on a kink.
  const Tensor x = add(wave({3, 5}, 0.37, 0.1, 4.0), 2.5);
  EXPECT_TRUE(gradcheck([](auto& v) { return relu6(v[0]); }, {x}));
  EXPECT_TRUE(gradcheck([](auto& v) { return gelu(v[0]); }, {x}));
  EXPECT_TRUE(gradcheck([](auto& v) { return gelu(v[0]); }, {wave({4, 4}, 0.9, 0.2, 5.0)}));
  EXPECT_TRUE(gradcheck([](auto& v) { return gelu(v[0], "tanh"); }, {x}));
  EXPECT_TRUE(gradcheck([](auto& v) { return silu(v[0]); }, {x}));
  EXPECT_TRUE(gradcheck([](auto& v) { return leaky_relu(v[0], 0.3); }, {x}));
  EXPECT_TRUE(gradcheck([](auto& v) { return clamp(v[0], 0.5, 3.0); }, {x}));
  EXPECT_TRUE(gradcheck([](auto& v) { return clamp(v[0], std::nullopt, 3.0); }, {x}));
}

TEST(FunctionalTest, ClampMatchesPyTorch) {
  const Tensor x = kinks();
  EXPECT_TRUE(matches(clamp(x, -1.0, 3.0), kClamp, {3, 4}));
  EXPECT_TRUE(matches(clamp(x, 0.5), kClampMin, {3, 4}));
  EXPECT_TRUE(matches(clamp(x, std::nullopt, -0.3), kClampMax, {3, 4}));
  EXPECT_TRUE(matches(clamp(x, 4.0, 2.0), kClampCrossed, {3, 4}));  // min > max gives max
  Tensor nan = clamp(f64({kNaN, 9.0}, {2}), 0.0, 1.0);
  EXPECT_TRUE(std::isnan(detail::readElementAsDouble(nan, 0)));
  EXPECT_EQ(detail::readElementAsDouble(nan, 1), 1.0);
}

// torch.clamp(int, 2) stays int64; torch.clamp(int, 1.5) is float32.
TEST(FunctionalTest, ClampOfIntegersPromotesOnlyForFractionalBounds) {
  const Tensor x = i64({1, 2, 3}, {3});
  Tensor whole = clamp(x, 2.0);
  EXPECT_TRUE(matches(whole, {2, 2, 3}, {3}, kInt64));
  Tensor fractional = clamp(x, 1.5);
  EXPECT_TRUE(matches(fractional, {1.5, 2, 3}, {3}, kFloat32));
  Tensor six = relu6(i64({1, 7, -2}, {3}));
  EXPECT_TRUE(matches(six, {1, 6, 0}, {3}, kInt64));
}

// ---- softmax --------------------------------------------------------------------------------

TEST(FunctionalTest, SoftmaxMatchesPyTorch) {
  const Tensor w = wave({3, 5});
  EXPECT_TRUE(matches(softmax(w, 1), kSoftmax1, {3, 5}));
  EXPECT_TRUE(matches(softmax(w, 0), kSoftmax0, {3, 5}));
  EXPECT_TRUE(matches(log_softmax(w, 1), kLogSoftmax1, {3, 5}));
  EXPECT_TRUE(matches(log_softmax(w, -2), kLogSoftmaxM2, {3, 5}));
  const Tensor r = wave({3, 5}, 0.5, 0.2, 1.0);
  EXPECT_TRUE(matches(gradOfSum([&](const Tensor& t) { return mul(softmax(t, 1), r); }, w),
                      kSoftmaxGrad, {3, 5}));
}

// exp(1000) overflows; the max shift keeps it finite.
TEST(FunctionalTest, SoftmaxIsStableForLargeInputs) {
  const Tensor big = tensor(std::vector<float>{1000.f, 1001.f, 1002.f});
  EXPECT_TRUE(matches(softmax(big, 0), kSoftmaxLarge, {3}, kFloat32));
  EXPECT_TRUE(matches(log_softmax(big, 0), kLogSoftmaxLarge, {3}, kFloat32));
}

TEST(FunctionalTest, SoftmaxOfEmptyIsEmpty) {
  EXPECT_EQ(softmax(zeros({0, 4}), 1).sizes(), (Shape{0, 4}));
  EXPECT_EQ(log_softmax(zeros({3, 0}), 1).sizes(), (Shape{3, 0}));
}

// The max shift carries no history, so the backward graph holds no max gradient.
TEST(FunctionalTest, SoftmaxGradCheck) {
  const Tensor w = wave({3, 4}, 0.7, 0.3, 3.0);
  EXPECT_TRUE(gradcheck([](auto& v) { return softmax(v[0], 1); }, {w}));
  EXPECT_TRUE(gradcheck([](auto& v) { return softmax(v[0], 0); }, {w}));
  EXPECT_TRUE(gradcheck([](auto& v) { return log_softmax(v[0], 1); }, {w}));
  EXPECT_TRUE(gradcheck([](auto& v) { return log_softmax(v[0], -2); }, {wave({2, 3, 2})}));
}

// ---- var, std -------------------------------------------------------------------------------

TEST(FunctionalTest, VarStdMatchPyTorch) {
  const Tensor w = wave({3, 5});
  EXPECT_TRUE(matches(var(w), kVarAll, {}));
  EXPECT_TRUE(matches(var(w, {1}), kVar1, {3}));
  EXPECT_TRUE(matches(var(w, {0}, 0, true), kVar0Biased, {1, 5}));
  EXPECT_TRUE(matches(std(w, {1}), kStd1, {3}));
  EXPECT_TRUE(matches(std(w, {0, 1}), kStdAll, {}));
  EXPECT_TRUE(matches(var(wave({3, 5}, 0.37, 0.1, 2.0, kFloat32), {-1}), kVar1F32, {3}, kFloat32));
  // One value with the unbiased estimator divides by zero: NaN, as torch.var.
  EXPECT_TRUE(std::isnan(var(f64({1.0}, {1})).item<double>()));
}

TEST(FunctionalTest, VarStdGradCheck) {
  const Tensor w = wave({3, 4});
  EXPECT_TRUE(gradcheck([](auto& v) { return var(v[0]); }, {w}));
  EXPECT_TRUE(gradcheck([](auto& v) { return var(v[0], {0}, 0, true); }, {w}));
  EXPECT_TRUE(gradcheck([](auto& v) { return std(v[0], {1}); }, {w}));
  EXPECT_TRUE(gradcheck([](auto& v) { return std(v[0], {-1, 0}, 2); }, {w}));
}

// PyTorch masks std's gradient where the result is 0 (a constant input) instead of 0·∞.
TEST(FunctionalTest, StdOfConstantHasZeroGradient) {
  Tensor grad = gradOfSum([](const Tensor& t) { return std(t); }, ones({3}, kFloat64));
  EXPECT_TRUE(matches(grad, {0, 0, 0}, {3}));
}

// ---- layer_norm -----------------------------------------------------------------------------

TEST(FunctionalTest, LayerNormMatchesPyTorch) {
  const Tensor x = wave({2, 3, 4});
  const Tensor w = wave({3, 4}, 0.5, 0.3, 1.0), b = wave({3, 4}, 0.7, 0.2, 0.5);
  EXPECT_TRUE(matches(layer_norm(x, {4}), kLayerNorm4, {2, 3, 4}));
  EXPECT_TRUE(matches(layer_norm(x, {3, 4}, w, b), kLayerNormAffine, {2, 3, 4}));
  Tensor single = layer_norm(x.to(kFloat32), {4}, w.to(kFloat32).narrow(0, 0, 1).reshape({4}),
                             b.to(kFloat32).narrow(0, 0, 1).reshape({4}));
  EXPECT_TRUE(matches(single, kLayerNormF32, {2, 3, 4}, kFloat32));
}

TEST(FunctionalTest, LayerNormGradCheck) {
  const Tensor x = wave({2, 3, 4});
  EXPECT_TRUE(gradcheck([](auto& v) { return layer_norm(v[0], {4}); }, {x}));
  EXPECT_TRUE(gradcheck([](auto& v) { return layer_norm(v[0], {3, 4}, v[1], v[2]); },
                        {x, wave({3, 4}, 0.5, 0.3, 1.0), wave({3, 4}, 0.7, 0.2, 0.5)}));
}

// ---- batch_norm -----------------------------------------------------------------------------

struct BatchNormState {
  Tensor runningMean = f64({0.1, -0.2, 0.3}, {3});
  Tensor runningVar = f64({1.0, 2.0, 0.5}, {3});
  Tensor weight = f64({1.5, -0.5, 2.0}, {3});
  Tensor bias = f64({0.1, 0.2, -0.3}, {3});
};

// Two training steps update the running statistics in place, PyTorch's way (unbiased
// variance, momentum 0.1); evaluation then normalizes with them and leaves them alone.
TEST(FunctionalTest, BatchNormRunningStatsAcrossTwoTrainingCallsAndEval) {
  BatchNormState s;
  const Tensor x = wave({2, 3, 2, 2});
  const Tensor meanStorage = s.runningMean;
  EXPECT_TRUE(matches(batch_norm(x, s.runningMean, s.runningVar, s.weight, s.bias, true), kBnTrain1,
                      {2, 3, 2, 2}));
  EXPECT_TRUE(matches(s.runningMean, kBnMean1, {3}));
  EXPECT_TRUE(matches(s.runningVar, kBnVar1, {3}));
  const Tensor x2 = add(mul(x, 2.0), 1.0);
  EXPECT_TRUE(matches(batch_norm(x2, s.runningMean, s.runningVar, s.weight, s.bias, true),
                      kBnTrain2, {2, 3, 2, 2}));
  EXPECT_TRUE(matches(s.runningMean, kBnMean2, {3}));
  EXPECT_TRUE(matches(s.runningVar, kBnVar2, {3}));
  EXPECT_TRUE(meanStorage.is_same(s.runningMean));  // updated in place, not rebound
  EXPECT_TRUE(matches(batch_norm(x, s.runningMean, s.runningVar, s.weight, s.bias, false), kBnEval,
                      {2, 3, 2, 2}));
  EXPECT_TRUE(matches(s.runningMean, kBnMean2, {3}));
  EXPECT_TRUE(matches(s.runningVar, kBnVar2, {3}));
}

// A tensor momentum gives the bits of the same momentum as a number; a bad one is named.
TEST(FunctionalTest, BatchNormTensorMomentumEqualsTheNumber) {
  BatchNormState a, b;
  const Tensor x = wave({2, 3, 2, 2});
  for (double momentum : {0.1, 1.0 / 3.0}) {
    Tensor y = batch_norm(x, a.runningMean, a.runningVar, a.weight, a.bias, true, momentum);
    Tensor z = batch_norm(x, b.runningMean, b.runningVar, b.weight, b.bias, true,
                          scalar_tensor(momentum, kFloat64));
    EXPECT_TRUE(matches(z, golden::valuesAsDouble(y), {2, 3, 2, 2}));
    EXPECT_EQ(golden::valuesAsDouble(b.runningMean), golden::valuesAsDouble(a.runningMean));
    EXPECT_EQ(golden::valuesAsDouble(b.runningVar), golden::valuesAsDouble(a.runningVar));
  }
  EXPECT_KILN_ERROR_HAS(batch_norm(x, b.runningMean, b.runningVar, b.weight, b.bias, true, ones({3})),
                        TypeError, "a tensor momentum must be a 0-d floating-point tensor, got a "
                        "float32 tensor of shape [3]");
}

TEST(FunctionalTest, BatchNormOfNCInFloat32WithoutAffine) {
  Tensor mean = zeros({3}), variance = ones({3});
  Tensor y = batch_norm(wave({4, 3}, 0.8, 0.0, 1.0, kFloat32), mean, variance, {}, {}, true, 0.3);
  EXPECT_TRUE(matches(y, kBnNcF32, {4, 3}, kFloat32));
  EXPECT_TRUE(matches(mean, kBnNcMeanF32, {3}, kFloat32));
  EXPECT_TRUE(matches(variance, kBnNcVarF32, {3}, kFloat32));
}

// The update runs without history: the running statistics never join the graph.
TEST(FunctionalTest, BatchNormRunningStatsStayOutOfTheGraph) {
  BatchNormState s;
  Tensor x = wave({4, 3});
  x.requires_grad_();
  Tensor w = s.weight.clone();
  w.requires_grad_();
  sum(batch_norm(x, s.runningMean, s.runningVar, w, s.bias, true)).backward();
  EXPECT_FALSE(s.runningMean.requires_grad());
  EXPECT_FALSE(s.runningVar.requires_grad());
  EXPECT_EQ(s.runningMean.grad_fn(), nullptr);
  EXPECT_TRUE(x.grad().defined());
  EXPECT_TRUE(w.grad().defined());
}

TEST(FunctionalTest, BatchNormGradCheck) {
  BatchNormState s;
  EXPECT_TRUE(gradcheck([](auto& v) { return batch_norm(v[0], {}, {}, v[1], v[2], true); },
                        {wave({2, 3, 2, 2}), s.weight, s.bias}));
  EXPECT_TRUE(gradcheck([](auto& v) { return batch_norm(v[0], {}, {}, {}, {}, true); },
                        {wave({5, 3})}));
  const Tensor mean = s.runningMean, variance = s.runningVar;
  EXPECT_TRUE(gradcheck([&](auto& v) { return batch_norm(v[0], mean, variance, v[1], v[2]); },
                        {wave({2, 3, 2}), s.weight, s.bias}));
}

// ---- losses ---------------------------------------------------------------------------------

TEST(FunctionalTest, MseLossMatchesPyTorch) {
  const Tensor input = wave({3, 4}), target = wave({3, 4}, 0.5, 0.9, 1.5);
  EXPECT_TRUE(matches(mse_loss(input, target, Reduction::None), kMseNone, {3, 4}));
  EXPECT_TRUE(matches(mse_loss(input, target, Reduction::Sum), kMseSum, {}));
  EXPECT_TRUE(matches(mse_loss(input, target), kMseMean, {}));
  EXPECT_TRUE(gradcheck([](auto& v) { return mse_loss(v[0], v[1]); }, {input, target}));
  EXPECT_TRUE(gradcheck([](auto& v) { return mse_loss(v[0], v[1], Reduction::None); },
                        {input, target}));
}

// PyTorch: F.smooth_l1_loss(torch.tensor([0., 0.5, 3.]), torch.tensor([0.2, 2., 0.]),
// reduction="none") is [0.02, 1.0, 2.5]; with beta=2, [0.01, 0.5625, 2.0].
TEST(FunctionalTest, SmoothL1LossIsQuadraticInsideBetaAndLinearOutside) {
  const Tensor input = tensor({0.0, 0.5, 3.0}, kFloat64), target = tensor({0.2, 2.0, 0.0}, kFloat64);
  EXPECT_TRUE(matches(smooth_l1_loss(input, target, Reduction::None), {0.02, 1.0, 2.5}, {3}));
  EXPECT_TRUE(matches(smooth_l1_loss(input, target, Reduction::None, 2.0), {0.01, 0.5625, 2.0}, {3}));
  EXPECT_TRUE(matches(smooth_l1_loss(input, target), {3.52 / 3}, {}));
  EXPECT_TRUE(matches(smooth_l1_loss(input, target, kSum, 0.0), {0.2 + 1.5 + 3.0}, {}));  // = l1
  EXPECT_TRUE(matches(l1_loss(input, target, kNone), {0.2, 1.5, 3.0}, {3}));
  const Tensor x = wave({3, 4}), y = wave({3, 4}, 0.5, 0.9, 1.5);
  EXPECT_TRUE(gradcheck([](auto& v) { return smooth_l1_loss(v[0], v[1]); }, {x, y}));
  EXPECT_TRUE(gradcheck([](auto& v) { return smooth_l1_loss(v[0], v[1], kNone, 0.5); }, {x, y}));
  EXPECT_TRUE(gradcheck([](auto& v) { return l1_loss(v[0], v[1], kSum); }, {x, y}));
  EXPECT_KILN_ERROR(smooth_l1_loss(wave({3, 1}), wave({3})), ShapeError,
                    "kiln::smooth_l1_loss: input has shape [3, 1] but target has shape [3]; they "
                    "must be equal (broadcasting them is almost always a bug)" + at());
  EXPECT_KILN_ERROR(smooth_l1_loss(x, y, kMean, -1.0), Error,
                    "kiln::smooth_l1_loss: beta must be non-negative, got -1" + at());
}

TEST(FunctionalTest, NormAllAndAny) {
  const Tensor x = tensor({{3.0, -4.0}, {0.0, 1.0}}, kFloat64);
  EXPECT_TRUE(matches(norm(x), {std::sqrt(26.0)}, {}));
  EXPECT_TRUE(matches(x.norm(2, 1), {5.0, 1.0}, {2}));
  EXPECT_TRUE(matches(x.norm(1, 0, true), {3.0, 5.0}, {1, 2}));
  EXPECT_TRUE(matches(norm(x, 3), {std::cbrt(27.0 + 64.0 + 1.0)}, {}));
  EXPECT_TRUE(gradcheck([](auto& v) { return norm(v[0], 2, {1}); }, {add(wave({2, 3}), 3.0)}));
  EXPECT_TRUE(gradcheck([](auto& v) { return norm(v[0], 3); }, {add(wave({2, 3}), 3.0)}));
  EXPECT_KILN_ERROR(norm(x, 0), Error, "kiln::norm: p must be positive, got 0" + at());
  EXPECT_EQ(x.all().item<bool>(), false);
  EXPECT_EQ(x.any().item<bool>(), true);
  EXPECT_EQ(x.all(1).dtype(), kBool);
  EXPECT_TRUE(matches(x.all(1).to(kFloat64), {1.0, 0.0}, {2}));
  EXPECT_TRUE(matches(zeros({2, 2}).any(0, true).to(kFloat64), {0.0, 0.0}, {1, 2}));
}

TEST(FunctionalTest, NllLossMatchesPyTorch) {
  const Tensor lp = wave({4, 5});
  const Tensor target = i64({1, 0, 4, 2}, {4}), ignored = i64({1, -100, 4, 2}, {4});
  const Tensor weight = f64({0.5, 1.0, 2.0, 1.5, 0.2}, {5});
  EXPECT_TRUE(matches(nll_loss(lp, target, Reduction::None), kNllNone, {4}));
  EXPECT_TRUE(matches(nll_loss(lp, target, Reduction::Sum), kNllSum, {}));
  EXPECT_TRUE(matches(nll_loss(lp, target), kNllMean, {}));
  EXPECT_TRUE(matches(nll_loss(lp, target, Reduction::Mean, weight), kNllWeighted, {}));
  EXPECT_TRUE(matches(nll_loss(lp, ignored), kNllIgnored, {}));
  EXPECT_TRUE(matches(nll_loss(lp, ignored, Reduction::None), kNllIgnoredNone, {4}));
  EXPECT_TRUE(matches(nll_loss(lp, ignored, Reduction::Mean, weight), kNllIgnoredWeighted, {}));
  EXPECT_TRUE(matches(nll_loss(lp, target.to(kInt32)), kNllMean, {}));
}

TEST(FunctionalTest, NllLossOfSpatialAndSingleInputs) {
  const Tensor target = i64({0, 2, 1, 1}, {2, 2});
  EXPECT_TRUE(matches(nll_loss(wave({2, 3, 2}), target, Reduction::None), kNll3d, {2, 2}));
  EXPECT_TRUE(matches(nll_loss(wave({2, 3, 2}), target), kNll3dMean, {}));
  EXPECT_TRUE(matches(nll_loss(wave({5}), i64({3}, {}), Reduction::None), kNll1d, {}));
}

// An empty batch has no loss to average: None and Sum are empty and 0, Mean is 0/0 = NaN
// (as PyTorch).
TEST(FunctionalTest, NllLossOfAnEmptyBatch) {
  const Tensor lp = zeros({0, 5}, kFloat64), target = zeros({0}, kInt64);
  EXPECT_EQ(nll_loss(lp, target, Reduction::None).sizes(), (Shape{0}));
  EXPECT_TRUE(matches(nll_loss(lp, target, Reduction::Sum), {0.0}, {}));
  EXPECT_TRUE(matches(cross_entropy(lp, target), {kNaN}, {}));
}

// An ignored target is selected away, not multiplied by 0, so -inf elsewhere in its row
// cannot make the loss NaN.
TEST(FunctionalTest, NllLossIgnoresTargetsWhoseRowHoldsMinusInfinity) {
  Tensor lp = wave({4, 5}).contiguous();
  lp.data_ptr<double>()[5] = -kInf;  // row 1, class 0: where the ignored target points
  EXPECT_TRUE(matches(nll_loss(lp, i64({1, -100, 4, 2}, {4})), kNllIgnored, {}));
}

TEST(FunctionalTest, NllLossGradCheck) {
  const Tensor target = i64({1, 0, 4, 2}, {4});
  EXPECT_TRUE(gradcheck([&](auto& v) { return nll_loss(v[0], target); }, {wave({4, 5})}));
  EXPECT_TRUE(gradcheck([&](auto& v) { return nll_loss(v[0], target, Reduction::Mean, v[1], 0); },
                        {wave({4, 5}), f64({0.5, 1.0, 2.0, 1.5, 0.2}, {5})}));
  const Tensor spatial = i64({0, 2, 1, 1}, {2, 2});
  EXPECT_TRUE(gradcheck([&](auto& v) { return nll_loss(v[0], spatial, Reduction::Sum); },
                        {wave({2, 3, 2})}));
}

TEST(FunctionalTest, CrossEntropyMatchesPyTorch) {
  const Tensor logits = wave({4, 5});
  const Tensor target = i64({1, 0, 4, 2}, {4});
  const Tensor weight = f64({0.5, 1.0, 2.0, 1.5, 0.2}, {5});
  EXPECT_TRUE(matches(cross_entropy(logits, target), kCeMean, {}));
  EXPECT_TRUE(matches(cross_entropy(logits, target, Reduction::None), kCeNone, {4}));
  EXPECT_TRUE(matches(cross_entropy(logits, i64({1, -100, 4, 2}, {4}), Reduction::Mean, weight),
                      kCeWeightedIgnored, {}));
  EXPECT_TRUE(matches(cross_entropy(logits.to(kFloat32), target), kCeF32, {}, kFloat32));
  EXPECT_TRUE(matches(gradOfSum([&](const Tensor& t) { return cross_entropy(t, target); }, logits),
                      kCeGrad, {4, 5}));
  const Tensor probs = softmax(wave({4, 5}, 0.9, 0.4, 1.0), 1);
  EXPECT_TRUE(matches(cross_entropy(logits, probs), kCeProbs, {}));
  EXPECT_TRUE(
      matches(cross_entropy(logits, probs, Reduction::Sum, weight), kCeProbsWeightedSum, {}));
}

TEST(FunctionalTest, CrossEntropyGradCheck) {
  const Tensor target = i64({1, 0, 4, 2}, {4});
  EXPECT_TRUE(gradcheck([&](auto& v) { return cross_entropy(v[0], target); }, {wave({4, 5})}));
  EXPECT_TRUE(gradcheck([&](auto& v) { return cross_entropy(v[0], target, Reduction::Sum, v[1]); },
                        {wave({4, 5}), f64({0.5, 1.0, 2.0, 1.5, 0.2}, {5})}));
  EXPECT_TRUE(gradcheck([](auto& v) { return cross_entropy(v[0], softmax(v[1], 1)); },
                        {wave({4, 5}), wave({4, 5}, 0.9, 0.4, 1.0)}));
}

// ---- embedding ------------------------------------------------------------------------------

TEST(FunctionalTest, EmbeddingMatchesPyTorch) {
  const Tensor table = wave({5, 3}), ids = i64({1, 4, 0, 1}, {2, 2});
  EXPECT_TRUE(matches(embedding(table, ids), kEmbedding, {2, 2, 3}));
  const Tensor r = wave({2, 2, 3}, 0.5, 0.2, 1.0);
  EXPECT_TRUE(matches(gradOfSum([&](const Tensor& t) { return mul(embedding(t, ids), r); }, table),
                      kEmbeddingGrad, {5, 3}));
  EXPECT_TRUE(gradcheck([&](auto& v) { return embedding(v[0], ids); }, {table}));
}

// ---- errors ---------------------------------------------------------------------------------
// Every message names the op, the shapes or dtypes, and the caller's line (at()).

TEST(FunctionalTest, LossShapeErrors) {
  const Tensor logits = wave({4, 5}), c3 = zeros({3}, kFloat64);
  EXPECT_KILN_ERROR(cross_entropy(logits, i64({1, 0, 4}, {3})), ShapeError,
                    "kiln::cross_entropy: target has shape [3] but the input of shape [4, 5] "
                    "needs a target of shape [4]" + at());
  EXPECT_KILN_ERROR(cross_entropy(logits, zeros({4, 4}, kFloat64)), ShapeError,
                    "kiln::cross_entropy: a floating-point target holds class probabilities and "
                    "must have the input's shape [4, 5], got [4, 4]" + at());
  EXPECT_KILN_ERROR(cross_entropy(scalar_tensor(1.0), i64({0}, {})), ShapeError,
                    "kiln::cross_entropy: input must have a class dim, got a 0-d tensor" + at());
  EXPECT_KILN_ERROR(nll_loss(logits, i64({1, 0}, {2})), ShapeError,
                    "kiln::nll_loss: target has shape [2] but the input of shape [4, 5] needs a "
                    "target of shape [4]" + at());
  EXPECT_KILN_ERROR(nll_loss(wave({5}), i64({1}, {1})), ShapeError,
                    "kiln::nll_loss: target has shape [1] but the input of shape [5] needs a "
                    "target of shape []" + at());
  EXPECT_KILN_ERROR(nll_loss(logits, i64({1, 0, 4, 2}, {4}), Reduction::Mean, c3), ShapeError,
                    "kiln::nll_loss: weight has shape [3] but the input of shape [4, 5] needs [5]" +
                        at());
  EXPECT_KILN_ERROR(mse_loss(wave({3, 1}), wave({3})), ShapeError,
                    "kiln::mse_loss: input has shape [3, 1] but target has shape [3]; they must be "
                    "equal (broadcasting them is almost always a bug)" + at());
}

// Checked on the host in eager mode (a trace reads no values): a target that would land in
// another row of the flattened log-probabilities is caught too.
TEST(FunctionalTest, OutOfRangeTargetsAreShapeErrors) {
  const Tensor logits = wave({4, 5});
  EXPECT_KILN_ERROR(nll_loss(logits, i64({1, 5, 0, 0}, {4})), ShapeError,
                    "kiln::nll_loss: target 5 at position 1 is out of range for 5 classes (input "
                    "of shape [4, 5])" + at());
  EXPECT_KILN_ERROR(cross_entropy(logits, i64({1, 0, -3, 0}, {4})), ShapeError,
                    "kiln::cross_entropy: target -3 at position 2 is out of range for 5 classes "
                    "(input of shape [4, 5])" + at());
  EXPECT_KILN_ERROR(embedding(wave({3, 2}), i64({0, 3}, {2})), ShapeError,
                    "kiln::embedding: index 3 at position 1 is out of range for 3 embeddings "
                    "(weight of shape [3, 2])" + at());
}

TEST(FunctionalTest, NormalizationShapeErrors) {
  const Tensor x = wave({2, 3, 2, 2}), c3 = zeros({3}, kFloat64), c4 = zeros({4}, kFloat64);
  EXPECT_KILN_ERROR(layer_norm(x, {3}), ShapeError,
                    "kiln::layer_norm: normalized_shape [3] does not match the trailing dims of "
                    "the input of shape [2, 3, 2, 2]" + at());
  EXPECT_KILN_ERROR(layer_norm(x, {}), ShapeError,
                    "kiln::layer_norm: normalized_shape [] does not match the trailing dims of "
                    "the input of shape [2, 3, 2, 2]" + at());
  EXPECT_KILN_ERROR(layer_norm(x, {2, 2}, c4), ShapeError,
                    "kiln::layer_norm: weight has shape [4] but the input of shape [2, 3, 2, 2] "
                    "needs [2, 2]" + at());
  EXPECT_KILN_ERROR(batch_norm(x, c4, c3, {}, {}, true), ShapeError,
                    "kiln::batch_norm: running_mean has shape [4] but the input of shape "
                    "[2, 3, 2, 2] needs [3]" + at());
  EXPECT_KILN_ERROR(batch_norm(x, c3, c4), ShapeError,
                    "kiln::batch_norm: running_var has shape [4] but the input of shape "
                    "[2, 3, 2, 2] needs [3]" + at());
  EXPECT_KILN_ERROR(batch_norm(x, c3, c3, {}, c4), ShapeError,
                    "kiln::batch_norm: bias has shape [4] but the input of shape [2, 3, 2, 2] "
                    "needs [3]" + at());
  EXPECT_KILN_ERROR(batch_norm(c3, c3, c3), ShapeError,
                    "kiln::batch_norm: expects an input of shape [N, C, *], got [3]" + at());
  EXPECT_KILN_ERROR(batch_norm(zeros({1, 3}, kFloat64), {}, {}, {}, {}, true), ShapeError,
                    "kiln::batch_norm: training needs more than 1 value per channel, got an "
                    "input of shape [1, 3]" + at());
}

TEST(FunctionalTest, DimErrorsNameTheCompositeOp) {
  const Tensor x = wave({4, 5});
  EXPECT_KILN_ERROR(softmax(x, 2), ShapeError,
                    "kiln::softmax: dimension 2 is out of range for a tensor of rank 2 (expected a "
                    "value in [-2, 1])" + at());
  EXPECT_KILN_ERROR(log_softmax(x, -3), ShapeError,
                    "kiln::log_softmax: dimension -3 is out of range for a tensor of rank 2 "
                    "(expected a value in [-2, 1])" + at());
  EXPECT_KILN_ERROR(var(x, {1, -1}), ShapeError,
                    "kiln::var: dim appears more than once in [1, 1]" + at());
  EXPECT_KILN_ERROR(embedding(zeros({3}), i64({0}, {1})), ShapeError,
                    "kiln::embedding: weight must be 2-d [num_embeddings, dim], got shape [3]" +
                        at());
}

TEST(FunctionalTest, TypeErrorsNameTheOpAndTheDType) {
  const Tensor ints = i64({1, 2, 3}, {3});
  EXPECT_KILN_ERROR(softmax(ints, 0), TypeError,
                    "kiln::softmax: expected a floating-point input, got int64 tensor of shape "
                    "[3]" + at());
  EXPECT_KILN_ERROR(layer_norm(ints, {3}), TypeError,
                    "kiln::layer_norm: expected a floating-point input, got int64 tensor of shape "
                    "[3]" + at());
  EXPECT_KILN_ERROR(gelu(ints), TypeError,
                    "kiln::gelu: expected a floating-point tensor, got int64 tensor of shape [3]" +
                        at());
  EXPECT_KILN_ERROR(gelu(ints, "tanh"), TypeError,
                    "kiln::gelu: expected a floating-point tensor, got int64 tensor of shape [3]" +
                        at());
  EXPECT_KILN_ERROR(nll_loss(wave({3, 2}), zeros({3}, kFloat64)), TypeError,
                    "kiln::nll_loss: target must be int32 or int64, got float64 tensor of shape "
                    "[3]" + at());
  EXPECT_KILN_ERROR(embedding(wave({3, 2}), zeros({2})), TypeError,
                    "kiln::embedding: indices must be int32 or int64, got float32 tensor of "
                    "shape [2]" + at());
  using Op = Tensor (*)(const Tensor&);
  for (Op op : {Op([](const Tensor& t) { return silu(t); }),
                Op([](const Tensor& t) { return leaky_relu(t); }),
                Op([](const Tensor& t) { return var(t); }),
                Op([](const Tensor& t) { return std(t); })})
    EXPECT_KILN_ERROR_HAS(op(ints), TypeError, "expected a floating-point input, got int64");
}

TEST(FunctionalTest, BadArgumentsAreErrors) {
  const Tensor x = wave({2, 3});
  EXPECT_KILN_ERROR(gelu(x, "fast"), Error,
                    "kiln::gelu: approximate must be \"none\" or \"tanh\", got \"fast\"" + at());
  EXPECT_KILN_ERROR(clamp(x, std::nullopt, std::nullopt), Error,
                    "kiln::clamp: at least one of min and max must be given" + at());
  EXPECT_KILN_ERROR(batch_norm(x, {}, {}), Error,
                    "kiln::batch_norm: running_mean and running_var must be given in evaluation "
                    "mode (training = false)" + at());
}

// ---- what the tracer sees -------------------------------------------------------------------

// Records the kiln ops dispatched, the in-place writes and any value read, as a tracer sees them.
class RecordingHook : public DispatchHook {
 public:
  explicit RecordingHook(bool symbolic) : symbolic_(symbolic) {}
  bool symbolic() const override { return symbolic_; }
  void onOp(const OpCall& call) override {
    ops.push_back(std::string(call.op.kilnOp));
    if (call.inPlace) inPlace.push_back(call.inputs[0]);
  }
  void onValueRead(const Tensor&, std::string_view what, const SourceLoc&) override {
    valueReads.push_back(std::string(what));
  }
  bool recorded(const std::string& op) const {
    return std::find(ops.begin(), ops.end(), op) != ops.end();
  }

  std::vector<std::string> ops;
  std::vector<Tensor> inPlace;
  std::vector<std::string> valueReads;

 private:
  bool symbolic_;
};

// Composites are made of dialect ops only (gelu's exact form is the one primitive), read
// no values, and run on symbolic placeholders.
TEST(FunctionalTest, CompositesRecordOnlyKilnOpsAndReadNoValues) {
  BatchNormState s;
  const Tensor logits = wave({4, 5}), target = i64({1, 0, 4, 2}, {4});
  RecordingHook hook(/*symbolic=*/true);
  {
    DispatchHookGuard guard(&hook);
    Tensor y = cross_entropy(logits, target);
    EXPECT_TRUE(y.is_placeholder());
    layer_norm(wave({2, 3, 4}), {4});
    std(wave({3, 4}), {1});
    clamp(relu6(gelu(silu(leaky_relu(logits)), "tanh")), 0.0, 1.0);
    embedding(wave({5, 3}), target);
    mse_loss(logits, logits);
    batch_norm(wave({2, 3, 2}), s.runningMean, s.runningVar, s.weight, s.bias, true);
  }
  EXPECT_THAT(hook.valueReads, ::testing::IsEmpty());
  // The core ops of docs/ARCHITECTURE.md §4 that composites may use.
  const std::vector<std::string> dialect = {
      "kiln.constant", "kiln.neg", "kiln.abs", "kiln.exp", "kiln.log", "kiln.sqrt",
      "kiln.rsqrt", "kiln.tanh", "kiln.sigmoid", "kiln.relu", "kiln.gelu", "kiln.add",
      "kiln.sub", "kiln.mul", "kiln.div", "kiln.max", "kiln.min", "kiln.compare",
      "kiln.select", "kiln.convert", "kiln.broadcast_in_dim", "kiln.reshape", "kiln.transpose",
      "kiln.slice", "kiln.reduce", "kiln.gather"};
  for (const std::string& op : hook.ops) EXPECT_THAT(dialect, ::testing::Contains(op));
  EXPECT_FALSE(hook.recorded("kiln.gelu"));  // the tanh form is composed
  EXPECT_TRUE(hook.recorded("kiln.gather"));
  // Both running statistics are state updates written in place.
  ASSERT_EQ(hook.inPlace.size(), 4u);  // mul_ and add_ for each
  EXPECT_TRUE(hook.inPlace[0].is_same(s.runningMean));
  EXPECT_TRUE(hook.inPlace[2].is_same(s.runningVar));
  // A symbolic trace computes nothing: the running statistics keep their values.
  EXPECT_TRUE(matches(s.runningMean, {0.1, -0.2, 0.3}, {3}));
}

TEST(FunctionalTest, ExactGeluIsTheKilnGeluPrimitive) {
  RecordingHook hook(/*symbolic=*/false);
  {
    DispatchHookGuard guard(&hook);
    gelu(wave({3}));
  }
  EXPECT_THAT(hook.ops, ::testing::ElementsAre("kiln.gelu"));
}

}  // namespace
}  // namespace kiln

// The golden values above were printed by this script (python3-torch 1.13):
//
// import math, textwrap, torch, torch.nn.functional as F
// f64 = torch.float64
//
// def wave(shape, freq=0.37, phase=0.1, amp=2.0):
//     n = math.prod(shape)
//     values = [amp * math.sin(freq * i + phase) for i in range(n)]
//     return torch.tensor(values, dtype=f64).reshape(shape)
//
// def grad_of(f, x):
//     x = x.clone().requires_grad_(True)
//     f(x).sum().backward()
//     return x.grad
//
// def number(v, single):
//     if math.isnan(v): return "kNaN"
//     if math.isinf(v): return "kInf" if v > 0 else "-kInf"
//     return repr(float("%.9g" % v)) if single else repr(v)
//
// def emit(name, t):
//     t = t.detach()
//     single = t.dtype == torch.float32
//     text = ", ".join(number(v, single) for v in t.reshape(-1).tolist())
//     body = textwrap.fill(text, 96, initial_indent="    ", subsequent_indent="    ")
//     print("const std::vector<double> k%s = {  // %s\n%s};" % (name, list(t.shape), body))
//
// X = torch.tensor([-2.5, -1.0, -0.3, 0.0, 0.2, 0.7, 1.5, 3.0, 5.9, 6.0, 6.5, -7.1],
//                  dtype=f64).reshape(3, 4)
// tanh_gelu = lambda x: F.gelu(x, approximate="tanh")
// emit("Relu6", F.relu6(X)); emit("Relu6Grad", grad_of(F.relu6, X))
// emit("Gelu", F.gelu(X)); emit("GeluGrad", grad_of(F.gelu, X))
// emit("GeluTanh", tanh_gelu(X)); emit("GeluTanhGrad", grad_of(tanh_gelu, X))
// emit("GeluF32", F.gelu(X.float())); emit("GeluTanhF32", tanh_gelu(X.float()))
// emit("Silu", F.silu(X)); emit("SiluGrad", grad_of(F.silu, X))
// emit("LeakyRelu", F.leaky_relu(X, 0.2))
// emit("LeakyReluGrad", grad_of(lambda x: F.leaky_relu(x, 0.2), X))
// emit("Clamp", torch.clamp(X, -1, 3)); emit("ClampGrad", grad_of(lambda x: x.clamp(-1, 3), X))
// emit("ClampMin", torch.clamp(X, min=0.5)); emit("ClampMax", torch.clamp(X, max=-0.3))
// emit("ClampCrossed", torch.clamp(X, 4, 2))
//
// W = wave([3, 5])
// emit("Softmax1", F.softmax(W, 1)); emit("Softmax0", F.softmax(W, 0))
// emit("LogSoftmax1", F.log_softmax(W, 1)); emit("LogSoftmaxM2", F.log_softmax(W, -2))
// emit("SoftmaxGrad", grad_of(lambda x: F.softmax(x, 1) * wave([3, 5], 0.5, 0.2, 1.0), W))
// big = torch.tensor([1000.0, 1001.0, 1002.0])
// emit("SoftmaxLarge", F.softmax(big, 0)); emit("LogSoftmaxLarge", F.log_softmax(big, 0))
//
// emit("VarAll", torch.var(W)); emit("Var1", torch.var(W, 1))
// emit("Var0Biased", torch.var(W, 0, correction=0, keepdim=True))
// emit("Std1", torch.std(W, 1)); emit("StdAll", torch.std(W, (0, 1)))
// emit("Var1F32", torch.var(W.float(), 1))
//
// L = wave([2, 3, 4]); Lw = wave([3, 4], 0.5, 0.3, 1.0); Lb = wave([3, 4], 0.7, 0.2, 0.5)
// emit("LayerNorm4", F.layer_norm(L, [4]))
// emit("LayerNormAffine", F.layer_norm(L, [3, 4], Lw, Lb))
// emit("LayerNormF32", F.layer_norm(L.float(), [4], Lw[0].float(), Lb[0].float()))
//
// B = wave([2, 3, 2, 2])
// bw = torch.tensor([1.5, -0.5, 2.0], dtype=f64); bb = torch.tensor([0.1, 0.2, -0.3], dtype=f64)
// rm = torch.tensor([0.1, -0.2, 0.3], dtype=f64); rv = torch.tensor([1.0, 2.0, 0.5], dtype=f64)
// emit("BnTrain1", F.batch_norm(B, rm, rv, bw, bb, True, 0.1, 1e-5))
// emit("BnMean1", rm); emit("BnVar1", rv)
// emit("BnTrain2", F.batch_norm(B * 2 + 1, rm, rv, bw, bb, True, 0.1, 1e-5))
// emit("BnMean2", rm); emit("BnVar2", rv)
// emit("BnEval", F.batch_norm(B, rm, rv, bw, bb, False, 0.1, 1e-5))
// rm2 = torch.zeros(3); rv2 = torch.ones(3)
// Bnc = wave([4, 3], 0.8, 0.0, 1.0).float()
// emit("BnNcF32", F.batch_norm(Bnc, rm2, rv2, None, None, True, 0.3))
// emit("BnNcMeanF32", rm2); emit("BnNcVarF32", rv2)
//
// I = wave([3, 4]); T = wave([3, 4], 0.5, 0.9, 1.5)
// emit("MseNone", F.mse_loss(I, T, reduction="none"))
// emit("MseSum", F.mse_loss(I, T, reduction="sum")); emit("MseMean", F.mse_loss(I, T))
//
// LP = wave([4, 5]); cw = torch.tensor([0.5, 1.0, 2.0, 1.5, 0.2], dtype=f64)
// tgt = torch.tensor([1, 0, 4, 2]); tig = torch.tensor([1, -100, 4, 2])
// emit("NllNone", F.nll_loss(LP, tgt, reduction="none"))
// emit("NllSum", F.nll_loss(LP, tgt, reduction="sum")); emit("NllMean", F.nll_loss(LP, tgt))
// emit("NllWeighted", F.nll_loss(LP, tgt, weight=cw)); emit("NllIgnored", F.nll_loss(LP, tig))
// emit("NllIgnoredNone", F.nll_loss(LP, tig, reduction="none"))
// emit("NllIgnoredWeighted", F.nll_loss(LP, tig, weight=cw))
// LP3 = wave([2, 3, 2]); t3 = torch.tensor([[0, 2], [1, 1]])
// emit("Nll3d", F.nll_loss(LP3, t3, reduction="none")); emit("Nll3dMean", F.nll_loss(LP3, t3))
// emit("Nll1d", F.nll_loss(wave([5]), torch.tensor(3), reduction="none"))
// emit("CeMean", F.cross_entropy(LP, tgt))
// emit("CeNone", F.cross_entropy(LP, tgt, reduction="none"))
// emit("CeWeightedIgnored", F.cross_entropy(LP, tig, weight=cw))
// emit("CeGrad", grad_of(lambda x: F.cross_entropy(x, tgt), LP))
// P = F.softmax(wave([4, 5], 0.9, 0.4, 1.0), 1)
// emit("CeProbs", F.cross_entropy(LP, P))
// emit("CeProbsWeightedSum", F.cross_entropy(LP, P, weight=cw, reduction="sum"))
// emit("CeF32", F.cross_entropy(LP.float(), tgt))
//
// E = wave([5, 3]); idx = torch.tensor([[1, 4], [0, 1]])
// emit("Embedding", F.embedding(idx, E))
// emit("EmbeddingGrad", grad_of(lambda e: F.embedding(idx, e) * wave([2, 2, 3], 0.5, 0.2, 1.0), E))
