function dX = avgpool_backward(dY, inputSize, poolsize, varargin)
%AVGPOOL_BACKWARD  Gradient of poolkit.avgpool with respect to X.
%   dX = poolkit.avgpool_backward(dY, inputSize, poolsize, 'DataFormat', fmt, ...)
%   inputSize = size(X); poolsize and the options as given to poolkit.avgpool.
if isa(poolsize, 'string'), poolsize = char(poolsize); end
[dY, args, host] = poolkit.internal.from_host(dY, varargin);
dX = poolkit.internal.to_host(poolkit.pkmex('avgpool_backward', dY, inputSize, poolsize, args{:}), host);
end
