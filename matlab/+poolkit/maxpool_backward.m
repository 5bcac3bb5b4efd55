function dX = maxpool_backward(dY, indx, inputSize, varargin)
%MAXPOOL_BACKWARD  Gradient of poolkit.maxpool: dX = zeros(inputSize); dX(indx) += dY.
%   dX = poolkit.maxpool_backward(dY, indx, inputSize)
%   indx and inputSize as poolkit.maxpool returns them (linear indices and size(X), or the compact form and its
%   struct). Cells chosen by several windows add their gradients.
[dY, ~, host] = poolkit.internal.from_host(dY, varargin);
dX = poolkit.internal.to_host(poolkit.internal.call('maxpool_backward', {dY, indx, inputSize}), host);
end
