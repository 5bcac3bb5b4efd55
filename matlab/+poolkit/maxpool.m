function [Y, indx, inputSize] = maxpool(X, poolsize, varargin)
%MAXPOOL  Max pooling with MATLAB's conventions, computed by poolkit.
%   Y = poolkit.maxpool(X, poolsize, 'DataFormat', fmt)
%   [Y, indx, inputSize] = poolkit.maxpool(X, poolsize, ...)
%   Y = poolkit.maxpool(X, 'global', ...)
%   X: single or double, real, full, non-empty. poolsize: a scalar or one size per pooled dimension.
%   Options: 'Stride' (default 1), 'Padding' (0; a scalar; one per pooled dimension; a 2-by-N matrix
%   [pre; post]; or 'same': out = ceil(in/stride), the odd padding cell after), 'DataFormat' (one of S, C, B,
%   T, U per dimension of X in any order; required unless X is a formatted dlarray), 'PoolFormat' ('S' by
%   default; 'T' or 'ST' to pool over time), 'Indices' ('linear' by default, or 'compact').
%   indx: 1-based linear indices into the whole X (double, shaped like Y); inputSize = size(X). A window's
%   first maximum in column-major order wins; a NaN wins over numbers (the last NaN when there are several).
%   'Indices','compact' (poolkit's own): indx is the window-local position of the maximum, 0-based, counted
%   column-major over the window (uint8 for windows of up to 255 cells, else int16/int32), and inputSize is a
%   struct (InputSize, PoolSize, Options) that maxunpool, maxpool_backward and maxunpool_backward take in place
%   of the size.
if isa(poolsize, 'string'), poolsize = char(poolsize); end
[X, args, host] = poolkit.internal.from_host(X, varargin);
if nargout < 2
  Y = poolkit.pkmex('maxpool', X, poolsize, args{:});
else
  [Y, indx] = poolkit.pkmex('maxpool', X, poolsize, args{:});
end
if nargout > 2
  inputSize = size(X);
  compact = find(strcmpi(args(1:2:end), 'Indices'), 1, 'last');
  if ~isempty(compact) && strcmpi(args{2 * compact}, 'compact')
    keep = true(size(args));
    keep([2 * compact - 1, 2 * compact]) = false;
    inputSize = struct('InputSize', inputSize, 'PoolSize', poolsize, 'Options', {args(keep)});
  end
end
Y = poolkit.internal.to_host(Y, host);
end
