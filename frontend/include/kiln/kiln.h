// Everything a Kiln program uses, in one include (torch/torch.h's role): the eager core,
// nn and vision models, optimizers, data loading, checkpoints, jit::trace, nn::Graph and the
// profiler.
#pragma once

#include "kiln/core/Autograd.h"
#include "kiln/core/Cuda.h"
#include "kiln/core/Functional.h"
#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"
#include "kiln/core/Tensor.h"
#include "kiln/core/ThreadPool.h"
#include "kiln/data/CIFAR10.h"
#include "kiln/data/DataLoader.h"
#include "kiln/data/Dataset.h"
#include "kiln/data/DatasetPipeline.h"
#include "kiln/data/MNIST.h"
#include "kiln/data/Transforms.h"
#include "kiln/io/Npy.h"
#include "kiln/io/Safetensors.h"
#include "kiln/io/Serialize.h"
#include "kiln/jit/Trace.h"
#include "kiln/nn/Graph.h"
#include "kiln/nn/Modules.h"
#include "kiln/optim/Adam.h"
#include "kiln/optim/LRScheduler.h"
#include "kiln/optim/SGD.h"
#include "kiln/profiler/Profiler.h"
#include "kiln/vision/MobileNetV2.h"
