function varargout = call(op, nout, args)
%CALL  One call of the MEX with the geometry arguments of a compact-index struct spliced in (see maxpool).
%   args{k} may be the struct that maxpool returns as its third output with 'Indices','compact': it stands for
%   its InputSize, PoolSize and options.
out = {};
for k = 1:numel(args)
  if isstruct(args{k}) && isfield(args{k}, 'PoolSize')
    s = args{k};
    args = [args(1:k-1), {s.InputSize, s.PoolSize}, s.Options, args(k+1:end)];
    break;
  end
end
[varargout{1:max(nout, 1)}] = poolkit.pkmex(op, args{:});
end
