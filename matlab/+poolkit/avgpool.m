function Y = avgpool(X, poolsize, varargin)
%AVGPOOL  Average pooling with MATLAB's conventions, computed by poolkit.
%   Y = poolkit.avgpool(X, poolsize | 'global', 'DataFormat', fmt, ...)
%   Options as poolkit.maxpool ('Stride', 'Padding', 'DataFormat', 'PoolFormat'), and 'PaddingValue':
%   0 (default: padded cells count in the divisor, which is the whole window) or 'mean' (the divisor is the
%   number of cells of X in the window).
if isa(poolsize, 'string'), poolsize = char(poolsize); end
[X, args, host] = poolkit.internal.from_host(X, varargin);
Y = poolkit.internal.to_host(poolkit.pkmex('avgpool', X, poolsize, args{:}), host);
end
