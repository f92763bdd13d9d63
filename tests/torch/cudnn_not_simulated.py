"""An LSTM on the GPU: PyTorch runs it through cuDNN's RNN API, which the simulator does
not model, so the rank must end naming the first such call (tests/torch/cudnn_test.cc)."""
import torch

lstm = torch.nn.LSTM(32, 32).cuda()
x = torch.randn(5, 3, 32, device="cuda")
y, _ = lstm(x)
torch.cuda.synchronize()
print("lstm ran")
